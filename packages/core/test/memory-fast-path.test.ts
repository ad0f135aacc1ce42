// MemoryStore's common consume (a GCRA, bucket or fixed-window policy that does not wait, cost 1,
// no key blocked) takes a path of its own; every other call takes the general one. Both must decide
// exactly alike: the same random traffic through a store on the fast path and through one held
// on the general path (a block on an unrelated key sends every consume there).
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createLimiter, type Decision, type Limiter, MemoryStore } from '../src/index.js'
import { withClock } from '../src/testing/index.js'
import { advanceMsArb, windowMsArb } from './setup/traffic.js'

const traffic = fc.record({
  limit: fc.integer({ min: 1, max: 12 }),
  windowMs: windowMsArb,
  burstExtra: fc.integer({ min: -5, max: 10 }),
  startMs: fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
  ops: fc.array(
    fc.record({
      advanceMs: advanceMsArb,
      key: fc.integer({ min: 0, max: 2 }),
      // mostly cost 1 (the fast path), sometimes a peek or a larger cost (the general path)
      cost: fc.oneof({ weight: 6, arbitrary: fc.constant(1) }, fc.integer({ min: 0, max: 4 })),
      refund: fc.boolean(),
    }),
    { minLength: 1, maxLength: 80 },
  ),
})

const numbers = ({ source: _source, ...rest }: Decision) => rest

describe.each(['gcra', 'token-bucket', 'leaky-bucket', 'fixed-window'] as const)(
  '%s on MemoryStore',
  (algorithm) => {
    it('the fast path and the general path give identical decisions for random traffic', async () => {
      let run = 0
      await fc.assert(
        fc.asyncProperty(traffic, async ({ limit, windowMs, burstExtra, startMs, ops }) => {
          let now = startMs
          const clock = () => now
          const options = {
            algorithm,
            limit,
            window: windowMs,
            burst: algorithm === 'fixed-window' ? limit : Math.max(1, limit + burstExtra),
          }
          const name = `fast${run++}`
          const fast = new MemoryStore()
          const general = new MemoryStore()
          const a: Limiter = createLimiter(withClock({ ...options, name, store: fast }, clock))
          const b: Limiter = createLimiter(withClock({ ...options, name, store: general }, clock))
          // a block elsewhere keeps every consume of `general` on the general path
          const other = createLimiter(
            withClock({ limit: 1, window: 1000, name: `${name}x`, store: general }, clock),
          )
          await other.block('elsewhere', 2_000_000_000)
          try {
            for (const [i, op] of ops.entries()) {
              now += op.advanceMs
              const key = `k${op.key}`
              const cost = Math.min(op.cost, a.policy.burst)
              const [da, db] = await Promise.all([a.consume(key, cost), b.consume(key, cost)])
              expect(numbers(da), `step ${i} ${JSON.stringify(op)}`).toEqual(numbers(db))
              if (op.refund && da.allowed && cost > 0) {
                await Promise.all([a.refund(key, cost, da), b.refund(key, cost, db)])
              }
            }
          } finally {
            await Promise.all([fast.close(), general.close()])
          }
        }),
        { numRuns: 150 },
      )
    })
  },
)

// Sweeping drops state that has expired by the latest time any call used: an injected clock's
// when it runs ahead of the real one (a real-clock call records nothing: sweep reads that clock
// itself). On both paths, the common consume's and the general one's.
describe('MemoryStore sweep under an injected clock ahead of real time', () => {
  it.each(['gcra', 'fixed-window', 'sliding-window'] as const)('%s', async (algorithm) => {
    const store = new MemoryStore()
    let now = Date.now() + 10 * 86_400_000
    const limiter = createLimiter(
      withClock(
        { algorithm, limit: 5, window: 1000, name: `sweep-${algorithm}`, store },
        () => now,
      ),
    )
    try {
      await limiter.consume('a')
      await limiter.consume('b', 2)
      // alive at the clock's time, though far past real time's view of it
      expect(store.sweep()).toBe(0)
      expect(store.size).toBe(2)
      now += 60_000
      await limiter.consume('c')
      // 'a' and 'b' ended a minute before the latest call's time: swept; 'c' is alive
      expect(store.sweep()).toBe(2)
      expect(store.size).toBe(1)
    } finally {
      await store.close()
    }
  })
})
