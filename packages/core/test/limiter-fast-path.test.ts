// A limiter's common consume (cost 1, no priority, a MemoryStore with one policy) takes a path of
// its own, with and without subscribers; a priority sends the same request down the general path.
// Both must answer exactly alike (fields, policies, JSON, tickets for refunds and releases), and
// the events of both must say the same.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  ALGORITHMS,
  createLimiter,
  DECISION_CHANNEL,
  type Decision,
  type DecisionEvent,
  type Limiter,
  MemoryStore,
} from '../src/index.js'
import { withClock } from '../src/testing/index.js'
import { advanceMsArb, windowMsArb } from './setup/traffic.js'

const traffic = fc.record({
  limit: fc.integer({ min: 1, max: 8 }),
  windowMs: windowMsArb,
  startMs: fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
  subscribed: fc.boolean(),
  ops: fc.array(
    fc.record({
      advanceMs: advanceMsArb,
      key: fc.integer({ min: 0, max: 2 }),
      giveBack: fc.boolean(),
    }),
    { minLength: 1, maxLength: 60 },
  ),
})

// everything a caller can read of a decision
const seen = (d: Decision) => ({ ...JSON.parse(JSON.stringify(d)), reason: d.reason })
const eventOf = ({ limiter: _limiter, decision: _decision, ...rest }: DecisionEvent) => rest

describe.each(ALGORITHMS)('%s on MemoryStore', (algorithm) => {
  it('the common path and the general path give identical decisions and events', async () => {
    let run = 0
    await fc.assert(
      fc.asyncProperty(traffic, async ({ limit, windowMs, startMs, subscribed, ops }) => {
        let now = startMs
        const clock = () => now
        const options = { algorithm, limit, window: windowMs, name: `one${run++}` }
        const fast: Limiter = createLimiter(
          withClock({ ...options, store: new MemoryStore() }, clock),
        )
        const general: Limiter = createLimiter(
          withClock({ ...options, store: new MemoryStore() }, clock),
        )
        const events: DecisionEvent[] = []
        const listener = (message: unknown) => events.push(message as DecisionEvent)
        if (subscribed) subscribe(DECISION_CHANNEL, listener)
        try {
          for (const [i, op] of ops.entries()) {
            now += op.advanceMs
            const key = `k${op.key}`
            const a = await fast.consume(key)
            // a priority rank (a normal one) takes the general path
            const b = await general.consume(key, 1, { priority: 'normal' })
            expect(seen(a), `step ${i} ${JSON.stringify(op)}`).toEqual(seen(b))
            if (op.giveBack && a.allowed) {
              if (algorithm === 'concurrency') {
                await Promise.all([fast.release(key, a), general.release(key, b)])
              } else await Promise.all([fast.refund(key, 1, a), general.refund(key, 1, b)])
            }
          }
        } finally {
          if (subscribed) unsubscribe(DECISION_CHANNEL, listener)
        }
        if (!subscribed) return
        const mine = (l: Limiter) => events.filter((e) => e.limiter === l)
        expect(mine(fast).map(eventOf)).toEqual(mine(general).map(eventOf))
        expect(mine(fast)).toHaveLength(ops.length)
      }),
      { numRuns: 60 },
    )
  })
})

describe('refusals on the common path', () => {
  it('a refusal equal to the one before is that one again, frozen; a later one is new', async () => {
    let now = 1_700_000_000_000
    const limiter = createLimiter(
      withClock({ limit: 1, window: '1m', name: 'hot', store: new MemoryStore() }, () => now),
    )
    expect((await limiter.consume('k')).allowed).toBe(true)
    const first = await limiter.consume('k')
    const again = await limiter.consume('k')
    expect(first.allowed).toBe(false)
    expect(again).toBe(first)
    expect(Object.isFrozen(first)).toBe(true)
    expect(first.policies[0]).toMatchObject({ allowed: false, remaining: 0 })
    now += 10
    const later = await limiter.consume('k')
    expect(later).not.toBe(first)
    expect(later.retryAfterMs).toBe(first.retryAfterMs - 10)
  })

  it('a repeated refusal settles through the same promise; anything else gets its own', async () => {
    let now = 1_700_000_000_000
    const limiter = createLimiter(
      withClock(
        { limit: 1, window: '1m', name: 'hot-promise', store: new MemoryStore() },
        () => now,
      ),
    )
    const admitted = limiter.consume('k')
    const refused = limiter.consume('k')
    // the refusal repeats within the ms: no new promise for it
    expect(limiter.consume('k')).toBe(refused)
    expect((await refused).allowed).toBe(false)
    // another key's admission gets a promise of its own
    const other = limiter.consume('j')
    expect(other).not.toBe(refused)
    expect((await other).allowed).toBe(true)
    // a refusal with the same numbers is the same frozen decision whichever key it is for
    const otherRefused = limiter.consume('j')
    expect(await otherRefused).toBe(await refused)
    // a refund frees the slot: the next consume is admitted, never the cached refusal
    await limiter.refund('k', 1, await admitted)
    const again = limiter.consume('k')
    expect(again).not.toBe(refused)
    expect((await again).allowed).toBe(true)
    // a later refusal is new, and so is its promise
    now += 5
    const later = limiter.consume('k')
    expect(later).not.toBe(refused)
    expect((await later).retryAfterMs).toBe((await refused).retryAfterMs - 5)
  })
})

describe('limiter:decision from a MemoryStore limiter', () => {
  it('carries the time the store decided at (atMs), and no duration: nothing was waited for', async () => {
    const now = 1_700_000_123_456
    const limiter = createLimiter(
      withClock({ limit: 2, window: '1m', name: 'at-ms', store: new MemoryStore() }, () => now),
    )
    const events: DecisionEvent[] = []
    const listener = (message: unknown) => events.push(message as DecisionEvent)
    subscribe(DECISION_CHANNEL, listener)
    try {
      await limiter.consume('a')
      await limiter.consume('a', 2)
      await limiter.peek('a')
    } finally {
      unsubscribe(DECISION_CHANNEL, listener)
    }
    const mine = events.filter((e) => e.limiter === limiter)
    expect(mine.map((e) => [e.cost, e.atMs, e.durationMs])).toEqual([
      [1, now, 0],
      [2, now, 0],
      [0, now, 0],
    ])
  })
})
