import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Decision } from '../decision/decision.js'
import {
  formatHeaders,
  HEADER_STANDARDS,
  type HeaderPair,
  type HeaderStandard,
  headerPolicies,
  headerPolicy,
  retryAfterSeconds,
  sfString,
} from './headers.js'

const policy = headerPolicy('api', 100, 60_000)
const allowed: Decision = {
  allowed: true,
  limit: 100,
  remaining: 42,
  resetMs: 16_001,
  retryAfterMs: 0,
  delayMs: 0,
  source: 'store',
  policies: [],
}
const denied: Decision = {
  allowed: false,
  limit: 100,
  remaining: 0,
  resetMs: 59_000,
  retryAfterMs: 2_500,
  delayMs: 0,
  source: 'store',
  policies: [],
}
const NOW = 1_700_000_000_500

describe('formatHeaders', () => {
  const cases: Array<[string, readonly HeaderStandard[], Decision, HeaderPair[]]> = [
    [
      'draft-10 allowed',
      ['draft-10'],
      allowed,
      [
        ['RateLimit-Policy', '"api";q=100;w=60'],
        ['RateLimit', '"api";r=42;t=17'],
      ],
    ],
    [
      'draft-10 denied: t is the Retry-After instant',
      ['draft-10'],
      denied,
      [
        ['RateLimit-Policy', '"api";q=100;w=60'],
        ['RateLimit', '"api";r=0;t=3'],
        ['Retry-After', '3'],
      ],
    ],
    [
      'draft-7 allowed',
      ['draft-7'],
      allowed,
      [
        ['RateLimit-Policy', '100;w=60'],
        ['RateLimit', 'limit=100, remaining=42, reset=17'],
      ],
    ],
    [
      'draft-6 allowed',
      ['draft-6'],
      allowed,
      [
        ['RateLimit-Policy', '100;w=60'],
        ['RateLimit-Limit', '100'],
        ['RateLimit-Remaining', '42'],
        ['RateLimit-Reset', '17'],
      ],
    ],
    [
      'legacy allowed: reset in epoch seconds',
      ['legacy'],
      allowed,
      [
        ['X-RateLimit-Limit', '100'],
        ['X-RateLimit-Remaining', '42'],
        ['X-RateLimit-Reset', String(1_700_000_001 + 17)],
      ],
    ],
    [
      'legacy denied',
      ['legacy'],
      denied,
      [
        ['X-RateLimit-Limit', '100'],
        ['X-RateLimit-Remaining', '0'],
        ['X-RateLimit-Reset', String(1_700_000_001 + 3)],
        ['Retry-After', '3'],
      ],
    ],
    [
      'draft-6 with draft-7 sends RateLimit-Policy once',
      ['draft-7', 'draft-6'],
      allowed,
      [
        ['RateLimit-Policy', '100;w=60'],
        ['RateLimit', 'limit=100, remaining=42, reset=17'],
        ['RateLimit-Limit', '100'],
        ['RateLimit-Remaining', '42'],
        ['RateLimit-Reset', '17'],
      ],
    ],
    ['no standard still sends Retry-After on a denial', [], denied, [['Retry-After', '3']]],
    ['no standard, allowed: nothing', [], allowed, []],
  ]
  it.each(cases)('%s', (_name, standards, decision, expected) => {
    expect(formatHeaders(standards, policy, decision, NOW)).toEqual(expected)
  })

  it('reads a clock passed as a function only for the legacy epoch reset', () => {
    let reads = 0
    const clock = () => {
      reads++
      return NOW
    }
    expect(formatHeaders(['draft-10'], policy, allowed, clock)).toEqual(
      formatHeaders(['draft-10'], policy, allowed, NOW),
    )
    expect(formatHeaders(['draft-7', 'draft-6'], policy, denied, clock)).toEqual(
      formatHeaders(['draft-7', 'draft-6'], policy, denied, NOW),
    )
    expect(reads).toBe(0)
    expect(formatHeaders(['legacy'], policy, allowed, clock)).toEqual(
      formatHeaders(['legacy'], policy, allowed, NOW),
    )
    expect(reads).toBe(1)
  })

  it('rounds windows and resets up to whole seconds', () => {
    const p = headerPolicy('p', 3, 1500)
    expect(p.policyMember).toBe('"p";q=3;w=2')
    const d: Decision = {
      allowed: true,
      limit: 3,
      remaining: 2,
      resetMs: 1,
      retryAfterMs: 0,
      delayMs: 0,
      source: 'store',
      policies: [],
    }
    expect(formatHeaders(['draft-10'], p, d, NOW)[1]).toEqual(['RateLimit', '"p";r=2;t=1'])
  })

  it('never reports Retry-After below 1 second', () => {
    const d: Decision = { ...denied, retryAfterMs: 0 }
    expect(retryAfterSeconds(d)).toBe(1)
  })
})

describe('sfString', () => {
  it.each([
    ['sw100/1m', '"sw100/1m"'],
    ['a"b\\c', '"a\\"b\\\\c"'],
    ['POST /login', '"POST /login"'],
    ['café', '"caf%C3%A9"'],
    ['tab\there', '"tab%09here"'],
  ])('%s -> %s', (input, expected) => {
    expect(sfString(input)).toBe(expected)
  })
})

const decisions = fc.record({
  allowed: fc.boolean(),
  limit: fc.integer({ min: 1, max: 1e9 }),
  remaining: fc.integer({ min: 0, max: 1e9 }),
  resetMs: fc.integer({ min: 0, max: 1e10 }),
  retryAfterMs: fc.integer({ min: 0, max: 1e10 }),
  delayMs: fc.constant(0),
  source: fc.constant('store' as const),
  policies: fc.constant([]),
})

describe('header properties', () => {
  it('Retry-After is whole seconds, at least 1, never before the retry time or the reset it accompanies', () => {
    fc.assert(
      fc.property(
        decisions,
        fc.subarray([...HEADER_STANDARDS]),
        fc.integer({ min: 1, max: 1e9 }),
        (d, picked, windowMs) => {
          const standards = picked.includes('draft-10')
            ? picked.filter((s) => s !== 'draft-6' && s !== 'draft-7')
            : picked
          const decision: Decision = { ...d, allowed: false }
          const pairs = formatHeaders(
            standards,
            headerPolicy('p', d.limit, windowMs),
            decision,
            NOW,
          )
          const retry = Number(pairs.find(([n]) => n === 'Retry-After')?.[1])
          expect(Number.isInteger(retry)).toBe(true)
          expect(retry).toBeGreaterThanOrEqual(1)
          expect(retry * 1000).toBeGreaterThanOrEqual(decision.retryAfterMs)
          for (const [name, value] of pairs) {
            const reset =
              /(?:;t=|reset=)(\d+)/.exec(value)?.[1] ??
              (name === 'RateLimit-Reset' ? value : undefined)
            if (reset !== undefined) expect(retry).toBeGreaterThanOrEqual(Number(reset))
            if (name === 'X-RateLimit-Reset')
              expect(Math.ceil(NOW / 1000) + retry).toBeGreaterThanOrEqual(Number(value))
          }
        },
      ),
    )
  })

  it('every numeric value is a non-negative integer', () => {
    fc.assert(
      fc.property(
        decisions,
        fc.constantFrom<HeaderStandard>(...HEADER_STANDARDS),
        fc.integer({ min: 1, max: 1e9 }),
        (d, standard, windowMs) => {
          for (const [, value] of formatHeaders(
            [standard],
            headerPolicy('p', d.limit, windowMs),
            d,
            NOW,
          )) {
            const numbers = value.replace(/"[^"]*"/g, '').match(/[-\d.]+/g) ?? []
            for (const n of numbers) expect(n).toMatch(/^\d+$/)
          }
        },
      ),
    )
  })
})

describe('a concurrency policy', () => {
  const inflight = headerPolicy('exports', 5, 120_000, true)
  const rate = headerPolicy('minute', 100, 60_000)
  const held: Decision = { ...allowed, limit: 5, remaining: 3, resetMs: 119_000 }
  const full: Decision = { ...denied, limit: 5, remaining: 0, resetMs: 90_000, retryAfterMs: 1_000 }
  const format = (standards: readonly HeaderStandard[], decision: Decision, p = inflight) =>
    formatHeaders(standards, p, decision, NOW)

  it('draft-10: quota in concurrent requests, no window, r the free slots, no t', () => {
    expect(format(['draft-10'], held)).toEqual([
      ['RateLimit-Policy', '"exports";q=5;qu="concurrent-requests"'],
      ['RateLimit', '"exports";r=3'],
    ])
    expect(format(['draft-10'], full)).toEqual([
      ['RateLimit-Policy', '"exports";q=5;qu="concurrent-requests"'],
      ['RateLimit', '"exports";r=0'],
      ['Retry-After', '1'],
    ])
  })

  it('the older standards leave out their reset field', () => {
    expect(format(['draft-7', 'legacy'], held)).toEqual([
      ['RateLimit-Policy', '5'],
      ['RateLimit', 'limit=5, remaining=3'],
      ['X-RateLimit-Limit', '5'],
      ['X-RateLimit-Remaining', '3'],
    ])
    expect(format(['draft-6'], full)).toEqual([
      ['RateLimit-Policy', '5'],
      ['RateLimit-Limit', '5'],
      ['RateLimit-Remaining', '0'],
      ['Retry-After', '1'],
    ])
  })

  it('beside a rate policy: each member as its own kind; one-policy standards describe the tighter', () => {
    const both = headerPolicies('api', [inflight, rate])
    expect(both.concurrent).toBeUndefined()
    const decision: Decision = {
      ...allowed,
      remaining: 3,
      policies: [
        {
          name: 'exports',
          allowed: true,
          limit: 5,
          remaining: 3,
          resetMs: 119_000,
          retryAfterMs: 0,
        },
        {
          name: 'minute',
          allowed: true,
          limit: 100,
          remaining: 42,
          resetMs: 16_001,
          retryAfterMs: 0,
        },
      ],
    }
    expect(format(['draft-10'], decision, both)).toEqual([
      ['RateLimit-Policy', '"exports";q=5;qu="concurrent-requests", "minute";q=100;w=60'],
      ['RateLimit', '"exports";r=3, "minute";r=42;t=17'],
    ])
    // the concurrency policy has the fewest remaining: no reset
    expect(format(['draft-7'], decision, both)).toEqual([
      ['RateLimit-Policy', '5'],
      ['RateLimit', 'limit=5, remaining=3'],
    ])
    const rateTighter = {
      ...decision,
      remaining: 1,
      policies: [decision.policies[0], { ...decision.policies[1], remaining: 1 }],
    } as Decision
    expect(format(['draft-7'], rateTighter, both)).toEqual([
      ['RateLimit-Policy', '100;w=60'],
      ['RateLimit', 'limit=100, remaining=1, reset=17'],
    ])
  })
})
