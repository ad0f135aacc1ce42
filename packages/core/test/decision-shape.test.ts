// What a caller can see of a Decision, pinned: its own properties (names, order, descriptors),
// what it inherits, JSON, `reason`, frozen-ness, and that refunds still find its ticket. The
// Decision is built on the hottest path, so how it is built changes; what it shows must not.
import { describe, expect, it } from 'vitest'
import { createLimiter, type Decision, MemoryStore } from '../src/index.js'
import { withClock } from '../src/testing/index.js'

// the README's way to copy a decision
const plain = (d: Decision) => (d as Decision & { toJSON(): Record<string, unknown> }).toJSON()
const FIELDS = ['allowed', 'limit', 'remaining', 'resetMs', 'retryAfterMs', 'delayMs', 'source']
const field = (value: unknown, frozen: boolean) => ({
  value,
  writable: !frozen,
  enumerable: true,
  configurable: !frozen,
})

function limiterAt(algorithm: 'gcra' | 'fixed-window' | 'sliding-log', now: () => number) {
  return createLimiter(
    withClock(
      { algorithm, limit: 1, window: '1m', name: algorithm, store: new MemoryStore() },
      now,
    ),
  )
}

describe.each(['gcra', 'fixed-window', 'sliding-log'] as const)('a %s decision', (algorithm) => {
  it('shows its seven fields as own data properties, in order, and nothing else', async () => {
    const now = 1_700_000_000_000
    const limiter = limiterAt(algorithm, () => now)
    for (const d of [await limiter.consume('k'), await limiter.consume('k')]) {
      expect(Reflect.ownKeys(d)).toEqual(FIELDS)
      const own = Object.getOwnPropertyDescriptors(d)
      for (const name of FIELDS)
        expect(own[name]).toEqual(field(d[name as keyof Decision], !d.allowed))
      expect('then' in d).toBe(false)
      expect(d.reason).toBeUndefined()
      expect(Object.keys(plain(d))).toEqual([...FIELDS, 'policies'])
      expect(JSON.parse(JSON.stringify(d))).toEqual({ ...plain(d) })
      expect(d.policies).toEqual([
        {
          name: limiter.policies[0]?.name,
          allowed: d.allowed,
          limit: 1,
          remaining: d.remaining,
          resetMs: d.resetMs,
          retryAfterMs: d.retryAfterMs,
        },
      ])
      expect(d.policies).toBe(d.policies)
      expect(Object.isFrozen(d.policies) && Object.isFrozen(d.policies[0])).toBe(true)
      // an admission is a fresh object the caller may extend; a refusal is frozen and shared
      expect(Object.isFrozen(d)).toBe(!d.allowed)
    }
  })

  it('still carries what its limiter needs to refund it', async () => {
    const now = 1_700_000_000_000
    const limiter = limiterAt(algorithm, () => now)
    const first = await limiter.consume('k')
    expect((await limiter.consume('k')).allowed).toBe(false)
    await limiter.refund('k', 1, first)
    expect((await limiter.consume('k')).allowed).toBe(true)
  })
})
