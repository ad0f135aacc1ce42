// The process-local cache of blocked keys: it answers a hot key without Redis, and it only ever
// refuses what Redis itself would refuse.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  ALGORITHMS,
  createLimiter,
  type LimiterOptions,
  MemoryStore,
  RATE_ALGORITHMS,
  RedisStore,
} from '../src/index.js'
import { withClock } from '../src/testing/index.js'
import { useRedis } from './setup/redis.js'

const redis = useRedis()
const RESERVING = new Set(['gcra', 'token-bucket', 'leaky-bucket'])

async function evalCalls(): Promise<number> {
  const info = await redis.client.info('commandstats')
  let calls = 0
  for (const m of info.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)) calls += Number(m[1])
  return calls
}

describe('blocked-key cache', () => {
  // A cached refusal of cost 3 must not outlive an admission of cost 1 on the same key: the
  // admission moves the key's state, and the next cost-3 refusal carries the later reset and
  // Retry-After. (Found by the twins test: leaky-bucket with maxDelay, Redis answered step 7
  // from the cache with step 4's numbers, 1915 / 1528 ms instead of 2302 / 1915.)
  it.each(
    RATE_ALGORITHMS.map((algorithm) => [algorithm, RESERVING.has(algorithm) ? 1141 : undefined]),
  )(
    '%s (maxDelay %s): an admission of the same key forgets its cached refusal',
    async (algorithm, maxDelay) => {
      const start = 1_600_000_000_000
      let now = start
      const clock = () => now
      const options = {
        algorithm,
        limit: 7,
        window: 2709,
        name: `admit-${algorithm}`,
        ...(maxDelay === undefined ? {} : { burst: 4, maxDelay }),
      } as LimiterOptions
      const remote = createLimiter(
        withClock({ ...options, store: new RedisStore({ client: redis.client }) }, clock),
      )
      const local = createLimiter(withClock({ ...options, store: new MemoryStore() }, clock))
      const steps: Array<[number, string, number]> = [
        [1, 'k0', 1],
        [0, 'k0', 1],
        [0, 'k0', 2],
        [237, 'k0', 2],
        [170, 'k0', 3],
        [0, 'k0', 1],
        [0, 'k1', 1],
        [0, 'k0', 3],
        [0, 'k0', 1],
        [0, 'k0', 3],
      ]
      let refusals = 0
      for (const [i, [advanceMs, key, cost]] of steps.entries()) {
        now += advanceMs
        const [r, l] = await Promise.all([remote.consume(key, cost), local.consume(key, cost)])
        const { source: _r, ...fromRedis } = r
        const { source: _l, ...fromMemory } = l
        expect(fromRedis, `step ${i}: ${cost} on ${key} at ${now - start} ms`).toEqual(fromMemory)
        if (!l.allowed) refusals++
      }
      expect(refusals).toBeGreaterThan(0)
    },
  )

  // (a concurrency refusal is never cached: a release may free a slot at any moment)
  it.each(RATE_ALGORITHMS)(
    '%s: a hot key far over its limit costs at most 0.01 Redis calls per refusal',
    async (algorithm) => {
      const limiter = createLimiter({
        algorithm,
        limit: 10,
        window: '1h',
        name: `hot-${algorithm}`,
        store: new RedisStore({ client: redis.client }),
      })
      await Promise.all(Array.from({ length: 10 }, () => limiter.consume('hot')))
      const before = await evalCalls()
      let refused = 0
      for (let round = 0; round < 20; round++) {
        const decisions = await Promise.all(
          Array.from({ length: 500 }, () => limiter.consume('hot')),
        )
        refused += decisions.filter((d) => !d.allowed && d.retryAfterMs > 0).length
      }
      const calls = (await evalCalls()) - before
      expect(refused).toBe(10_000)
      expect(calls / refused).toBeLessThanOrEqual(0.01)
    },
  )

  it.each(ALGORITHMS)(
    '%s: refuses only what Redis would refuse (random traffic, real Redis time)',
    async (algorithm) => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.record({
              key: fc.integer({ min: 0, max: 2 }),
              waitMs: fc.integer({ min: 0, max: 30 }),
              reset: fc.boolean(),
            }),
            { minLength: 5, maxLength: 25 },
          ),
          async (ops) => {
            const name = `prop-${algorithm}-${Math.random().toString(36).slice(2)}`
            const store = new RedisStore({ client: redis.client })
            const cached = createLimiter({ algorithm, limit: 3, window: 60, name, store })
            const direct = createLimiter({
              algorithm,
              limit: 3,
              window: 60,
              name,
              store,
              blockedCache: false,
            })
            for (const op of ops) {
              if (op.waitMs > 0) await new Promise((r) => setTimeout(r, op.waitMs))
              const key = `k${op.key}`
              if (op.reset && op.key === 0) await cached.reset(key)
              const decision = await cached.consume(key)
              if (!decision.allowed && decision.retryAfterMs > 15) {
                // Redis, asked right after (well before the refusal ends), refuses as well.
                const started = performance.now()
                const check = await direct.peek(key)
                if (performance.now() - started < 15) expect(check.allowed).toBe(false)
              }
            }
          },
        ),
        { numRuns: 8 },
      )
    },
  )

  it('with an injected clock, cached refusals equal what Redis decides, field by field', async () => {
    let now = 1_800_000_000_000
    const store = new RedisStore({ client: redis.client })
    const options = {
      algorithm: 'gcra' as const,
      limit: 2,
      window: 1000,
      name: 'exact-cache',
      store,
    }
    const cached = createLimiter(withClock(options, () => now))
    const direct = createLimiter(withClock({ ...options, blockedCache: false as const }, () => now))
    await cached.consume('x')
    await cached.consume('x')
    for (let step = 0; step < 12; step++) {
      const { source, ...a } = await cached.consume('x', 0)
      const { source: sourceB, ...b } = await direct.consume('x', 0)
      expect(a).toEqual(b)
      expect(sourceB).toBe('store')
      expect(['store', 'blocked-cache']).toContain(source)
      now += 50
    }
  })

  it('rejects a bad maxKeys at construction', () => {
    expect(() => createLimiter({ limit: 1, window: 1, blockedCache: { maxKeys: -1 } })).toThrow(
      /`blockedCache.maxKeys`/,
    )
  })

  it.each([true, 'off', 0, null])(
    'rejects blockedCache: %j at construction (it was silently taken as the default cache)',
    (value) => {
      const attempt = () => createLimiter({ limit: 1, window: 1, blockedCache: value as never })
      expect(attempt).toThrow(TypeError)
      expect(attempt).toThrow(
        /`blockedCache`: expected an object \{ maxKeys\?, maxMs\? \} or false/,
      )
    },
  )
})

describe('blocked-key cache and room that comes back before the request passes', () => {
  // A refusal of cost 5 with nothing remaining: 100 ms later the store has room for 1 again
  // (remaining 1) but still refuses the 5. The cache must not answer remaining 0 meanwhile.
  it.each(['gcra', 'sliding-log', 'sliding-window'] as const)(
    '%s: a refused cost above 1 is answered as the store answers it',
    async (algorithm) => {
      let now = 1_700_000_000_000
      const options = { algorithm, limit: 10, window: '1s', name: `room-${algorithm}` } as const
      const cached = createLimiter(
        withClock({ ...options, store: new RedisStore({ client: redis.client }) }, () => now),
      )
      const direct = createLimiter(withClock({ ...options, blockedCache: false }, () => now))
      for (const limiter of [cached, direct]) {
        for (let i = 0; i < 10; i++) {
          await limiter.consume('k', 1)
          now += 0 // all at the same instant
        }
      }
      const numbers = (d: { remaining: number; allowed: boolean; retryAfterMs: number }) => [
        d.allowed,
        d.remaining,
        d.retryAfterMs,
      ]
      const first = [await cached.consume('k', 5), await direct.consume('k', 5)]
      expect(numbers(first[0] as never)).toEqual(numbers(first[1] as never))
      expect(first[0]?.remaining).toBe(0)
      for (const step of [100, 100, 150]) {
        now += step
        const [a, b] = [await cached.consume('k', 5), await direct.consume('k', 5)]
        expect(numbers(a), `after ${step} ms more`).toEqual(numbers(b))
      }
      await cached.reset('k')
    },
  )
})
