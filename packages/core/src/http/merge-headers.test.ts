import { describe, expect, it } from 'vitest'
import type { Decision } from '../decision/decision.js'
import { formatHeaders, type HeaderPair, type HeaderStandard, headerPolicy } from './headers.js'
import { mergeHeaders } from './merge-headers.js'

describe('mergeHeaders', () => {
  const current =
    (headers: Record<string, string | number | string[]>) =>
    (name: string): string | number | string[] | undefined =>
      headers[name.toLowerCase()]

  it.each<[string, Record<string, string | number | string[]>, HeaderPair[], HeaderPair[]]>([
    [
      'appends draft-10 members',
      { 'ratelimit-policy': '"a";q=1;w=1', ratelimit: '"a";r=0;t=1' },
      [
        ['RateLimit-Policy', '"b";q=5;w=60'],
        ['RateLimit', '"b";r=4;t=60'],
      ],
      [
        ['RateLimit-Policy', '"a";q=1;w=1, "b";q=5;w=60'],
        ['RateLimit', '"a";r=0;t=1, "b";r=4;t=60'],
      ],
    ],
    [
      'reads multi-valued headers',
      { 'ratelimit-policy': ['"a";q=1;w=1', '"c";q=2;w=2'] },
      [['RateLimit-Policy', '"b";q=5;w=60']],
      [['RateLimit-Policy', '"a";q=1;w=1, "c";q=2;w=2, "b";q=5;w=60']],
    ],
    [
      'does not repeat an identical policy member',
      { 'ratelimit-policy': '100;w=60' },
      [['RateLimit-Policy', '100;w=60']],
      [['RateLimit-Policy', '100;w=60']],
    ],
    [
      'sets a header that is not there',
      {},
      [['RateLimit', '"b";r=4;t=60']],
      [['RateLimit', '"b";r=4;t=60']],
    ],
    [
      'keeps the later Retry-After',
      { 'retry-after': '30' },
      [['Retry-After', '3']],
      [['Retry-After', '30']],
    ],
    [
      'takes a later Retry-After',
      { 'retry-after': 3 },
      [['Retry-After', '30']],
      [['Retry-After', '30']],
    ],
    [
      'draft-6: the fewest remaining wins (existing)',
      { 'ratelimit-remaining': '1', 'ratelimit-limit': '5', 'ratelimit-reset': '3' },
      [
        ['RateLimit-Limit', '100'],
        ['RateLimit-Remaining', '42'],
        ['RateLimit-Reset', '17'],
      ],
      [],
    ],
    [
      'draft-6: the fewest remaining wins (incoming)',
      { 'ratelimit-remaining': '50' },
      [
        ['RateLimit-Limit', '100'],
        ['RateLimit-Remaining', '42'],
        ['RateLimit-Reset', '17'],
      ],
      [
        ['RateLimit-Limit', '100'],
        ['RateLimit-Remaining', '42'],
        ['RateLimit-Reset', '17'],
      ],
    ],
    [
      'legacy: the fewest remaining wins',
      { 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '9' },
      [
        ['X-RateLimit-Limit', '100'],
        ['X-RateLimit-Remaining', '42'],
        ['X-RateLimit-Reset', '17'],
      ],
      [],
    ],
    [
      'draft-7: the fewest remaining wins',
      { ratelimit: 'limit=5, remaining=1, reset=3', 'ratelimit-policy': '5;w=10' },
      [
        ['RateLimit-Policy', '100;w=60'],
        ['RateLimit', 'limit=100, remaining=42, reset=17'],
      ],
      [['RateLimit-Policy', '5;w=10, 100;w=60']],
    ],
    [
      'a draft-10 member replaces a draft-7 dictionary',
      { ratelimit: 'limit=5, remaining=1, reset=3' },
      [['RateLimit', '"b";r=4;t=60']],
      [['RateLimit', '"b";r=4;t=60']],
    ],
  ])('%s', (_name, existing, incoming, expected) => {
    expect(mergeHeaders(incoming, current(existing))).toEqual(expected)
  })

  describe("a single-valued set is one limiter's, whole", () => {
    const rate = {
      'ratelimit-limit': '100',
      'ratelimit-remaining': '99',
      'ratelimit-reset': '36',
    }
    it.each<[string, Record<string, string>, HeaderPair[], HeaderPair[]]>([
      [
        'a fail-open set (no remaining, no reset) leaves the set found',
        { 'ratelimit-limit': '5', 'ratelimit-remaining': '4', 'ratelimit-reset': '180' },
        [
          ['RateLimit-Policy', '100;w=60'],
          ['RateLimit-Limit', '100'],
        ],
        [['RateLimit-Policy', '100;w=60']],
      ],
      [
        'a fail-open legacy set leaves the set found',
        { 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '4', 'x-ratelimit-reset': '9' },
        [['X-RateLimit-Limit', '100']],
        [],
      ],
      [
        'a concurrency set (no reset) with fewer remaining leaves the set found',
        rate,
        [
          ['RateLimit-Limit', '2'],
          ['RateLimit-Remaining', '1'],
        ],
        [],
      ],
      [
        'a full set replaces a concurrency one with fewer remaining',
        { 'ratelimit-limit': '2', 'ratelimit-remaining': '1' },
        [
          ['RateLimit-Limit', '100'],
          ['RateLimit-Remaining', '99'],
          ['RateLimit-Reset', '36'],
        ],
        [
          ['RateLimit-Limit', '100'],
          ['RateLimit-Remaining', '99'],
          ['RateLimit-Reset', '36'],
        ],
      ],
    ])('%s', (_name, existing, incoming, expected) => {
      expect(mergeHeaders(incoming, current(existing))).toEqual(expected)
      expect(mergeHeaders(incoming, current(existing), undefined, 'before')).toEqual(expected)
    })

    it("on a tie the inner limiter's set stays (Node writes it last, Fetch first)", () => {
      const inner: HeaderPair[] = [
        ['RateLimit-Limit', '5'],
        ['RateLimit-Remaining', '99'],
        ['RateLimit-Reset', '900'],
      ]
      // Node: the outer limiter's set is there, the inner one's comes in
      expect(mergeHeaders(inner, current(rate))).toEqual(inner)
      // Fetch: the inner limiter's set is there, the outer one's comes in
      const found = {
        'ratelimit-limit': '5',
        'ratelimit-remaining': '99',
        'ratelimit-reset': '900',
      }
      expect(mergeHeaders(Object.entries(rate), current(found), undefined, 'before')).toEqual([])
    })
  })

  it('accumulates within one batch', () => {
    const incoming: HeaderPair[] = [
      ['RateLimit-Policy', '"a";q=1;w=1'],
      ['RateLimit-Policy', '"b";q=1;w=1'],
    ]
    expect(mergeHeaders(incoming, () => undefined)).toEqual([
      ['RateLimit-Policy', '"a";q=1;w=1, "b";q=1;w=1'],
    ])
  })

  it("place 'before' puts the member first (Fetch: the outer limiter decorates last)", () => {
    const existing = current({ 'ratelimit-policy': '"in";q=1;w=1', ratelimit: '"in";r=0;t=1' })
    const incoming: HeaderPair[] = [
      ['RateLimit-Policy', '"out";q=5;w=60'],
      ['RateLimit', '"out";r=4;t=60'],
    ]
    expect(mergeHeaders(incoming, existing, undefined, 'before')).toEqual([
      ['RateLimit-Policy', '"out";q=5;w=60, "in";q=1;w=1'],
      ['RateLimit', '"out";r=4;t=60, "in";r=0;t=1'],
    ])
    // and an identical member is not repeated
    expect(
      mergeHeaders([['RateLimit-Policy', '"in";q=1;w=1']], existing, undefined, 'before'),
    ).toEqual([['RateLimit-Policy', '"in";q=1;w=1']])
  })
})

describe('mergeHeaders across header styles (the first style written for a field wins)', () => {
  const STYLES: ReadonlyArray<readonly HeaderStandard[]> = [
    ['draft-10'],
    ['draft-7'],
    ['draft-6'],
    ['legacy'],
    ['draft-7', 'legacy'],
    ['draft-6', 'legacy'],
    ['draft-10', 'legacy'],
  ]
  const decision = (remaining: number): Decision => ({
    allowed: true,
    limit: 5,
    remaining,
    resetMs: 30_000,
    retryAfterMs: 0,
    delayMs: 0,
    source: 'store',
    policies: [],
  })
  const global = { policy: headerPolicy('global', 5, 60_000), decision: decision(4) }
  const route = { policy: headerPolicy('route', 2, 60_000), decision: decision(1) }
  type Limiter = typeof global

  // Writes limiter `a` (style `sa`) then `b` (style `sb`) into one response, as settleCheck does.
  function respond(
    a: Limiter,
    sa: readonly HeaderStandard[],
    b: Limiter,
    sb: readonly HeaderStandard[],
  ) {
    const response = new Map<string, string>()
    for (const [n, v] of formatHeaders(sa, a.policy, a.decision, 0))
      response.set(n.toLowerCase(), v)
    const incoming = formatHeaders(sb, b.policy, b.decision, 0)
    const restyle = (standard: 'draft-10' | 'draft-7') =>
      formatHeaders([standard], b.policy, b.decision, 0)
    for (const [n, v] of mergeHeaders(
      incoming,
      (name) => response.get(name.toLowerCase()),
      restyle,
    ))
      response.set(n.toLowerCase(), v)
    return response
  }

  const members = (value: string) => value.split(/\s*,\s*(?=")/)

  for (const sa of STYLES)
    for (const sb of STYLES)
      for (const [a, b] of [
        [global, route],
        [route, global],
      ] as const)
        it(`${sa.join('+')} (${a.policy.name}) then ${sb.join('+')} (${b.policy.name})`, () => {
          const response = respond(a, sa, b, sb)
          const policy = response.get('ratelimit-policy')
          if (policy !== undefined) {
            if (policy.startsWith('"')) {
              // A draft-10 list: every member named, both limiters present when both send one.
              expect(
                members(policy).every((m) => /^"[^"]+";q=\d+;w=\d+$/.test(m)),
                policy,
              ).toBe(true)
              if (sb.some((s) => s !== 'legacy')) expect(policy).toContain(`"${b.policy.name}"`)
              if (sa.some((s) => s !== 'legacy')) expect(policy).toContain(`"${a.policy.name}"`)
            } else {
              expect(policy, policy).toMatch(/^\d+;w=\d+(, \d+;w=\d+)*$/)
            }
          }
          const rateLimit = response.get('ratelimit')
          if (rateLimit !== undefined) {
            if (rateLimit.startsWith('"')) {
              expect(
                members(rateLimit).every((m) => /^"[^"]+";r=\d+;t=\d+$/.test(m)),
                rateLimit,
              ).toBe(true)
              if (sa.includes('draft-7') || sa.includes('draft-10'))
                expect(rateLimit).toContain(`"${a.policy.name}"`)
              if (sb.includes('draft-7') || sb.includes('draft-10'))
                expect(rateLimit).toContain(`"${b.policy.name}"`)
            } else {
              // One draft-7 dictionary: the limiter with the fewest remaining.
              expect(rateLimit).toMatch(/^limit=\d+, remaining=\d+, reset=\d+$/)
              const both = [sa, sb].every((s) => s.includes('draft-7') || s.includes('draft-10'))
              if (both) expect(rateLimit).toContain('remaining=1')
            }
          }
        })

  it('draft-10 global and draft-7 route: the route joins the list, nothing is dropped', () => {
    const response = respond(global, ['draft-10'], route, ['draft-7'])
    expect(response.get('ratelimit-policy')).toBe('"global";q=5;w=60, "route";q=2;w=60')
    expect(response.get('ratelimit')).toBe('"global";r=4;t=30, "route";r=1;t=30')
  })

  it('draft-7 global and draft-10 route: one dictionary, the fewest remaining', () => {
    const response = respond(global, ['draft-7'], route, ['draft-10'])
    expect(response.get('ratelimit-policy')).toBe('5;w=60, 2;w=60')
    expect(response.get('ratelimit')).toBe('limit=2, remaining=1, reset=30')
  })

  it('a fail-open entry in the other style adds no remaining quota', () => {
    const open = { ...route, decision: { ...decision(2), source: 'fail-open' as const } }
    const response = respond(global, ['draft-7'], open, ['draft-10'])
    expect(response.get('ratelimit')).toBe('limit=5, remaining=4, reset=30')
    expect(response.get('ratelimit-policy')).toBe('5;w=60, 2;w=60')
  })
})
