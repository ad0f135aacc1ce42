// Two limiters with the same name and prefix but different algorithms: on Redis each script used
// to misread the other's state (10 of 10 admitted at limit 3), and MemoryStore threw a raw
// TypeError. Now a chosen name's keys carry the algorithm's state layout, and one process refuses
// the second limiter at construction.
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import {
  type Algorithm,
  createLimiter,
  type Limiter,
  MemoryStore,
  RedisStore,
} from '../src/index.js'
import { claimCount } from '../src/policies/naming.js'
import { useRedis } from './setup/redis.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

const redis = useRedis()

// Every pair of algorithms with different state layouts.
const PAIRS: Array<[Algorithm, Algorithm]> = [
  ['fixed-window', 'gcra'],
  ['fixed-window', 'sliding-window'],
  ['sliding-window', 'sliding-log'],
  ['sliding-log', 'token-bucket'],
  ['gcra', 'sliding-window'],
  ['leaky-bucket', 'fixed-window'],
]

async function admitted(limiters: Limiter[], key: string, rounds: number): Promise<number[]> {
  const counts = limiters.map(() => 0)
  for (let i = 0; i < rounds; i++) {
    for (const [j, limiter] of limiters.entries()) {
      if ((await limiter.consume(key)).allowed) counts[j] = (counts[j] ?? 0) + 1
    }
  }
  return counts
}

describe('same name, different algorithms, on Redis (as two processes would)', () => {
  it.each(PAIRS)('%s and %s each keep their own limit of 3', async (a, b) => {
    // Two stores on one Redis: two processes, as far as the in-process check can tell.
    const name = `shared-${a}-${b}`
    const limiters = [a, b].map((algorithm) =>
      createLimiter({
        algorithm,
        limit: 3,
        window: '1m',
        name,
        store: new RedisStore({ client: redis.client }),
      }),
    )
    expect(await admitted(limiters, 'k', 10)).toEqual([3, 3])
  })

  it('the same algorithm and name still share one counter across processes', async () => {
    const limiters = [1, 2].map(() =>
      createLimiter({
        algorithm: 'gcra',
        limit: 3,
        window: '1m',
        name: 'shared-same',
        store: new RedisStore({ client: redis.client }),
      }),
    )
    const counts = await admitted(limiters, 'k', 5)
    expect((counts[0] ?? 0) + (counts[1] ?? 0)).toBe(3)
  })
})

describe('same name, different algorithms, in one process', () => {
  it.each([
    ['MemoryStore', () => new MemoryStore()],
    ['RedisStore', () => new RedisStore({ client: redis.client })],
  ])('on one %s is a construction error naming both', (_name, makeStore) => {
    const store = makeStore()
    createLimiter({ algorithm: 'fixed-window', limit: 3, window: '1m', name: 'login', store })
    const second = () =>
      createLimiter({ algorithm: 'gcra', limit: 3, window: '1m', name: 'login', store })
    expect(second).toThrow(RangeError)
    expect(second).toThrow(/`name`.*'fixed-window'.*'gcra'/)
    try {
      second()
    } catch (error) {
      expect((error as { code?: string }).code).toBe('ERR_LIMITER_CONFLICT')
    }
    // Another prefix is another name; the same algorithm shares the counter on purpose.
    createLimiter({ algorithm: 'gcra', limit: 3, window: '1m', name: 'login', prefix: 'x:', store })
    createLimiter({ algorithm: 'fixed-window', limit: 5, window: '1h', name: 'login', store })
  })
})

// Regression: the registry of claimed names let the oldest go past 10,000 names, so a live
// limiter's name could be taken with another algorithm; and 100,000 limiter names on one
// MemoryStore grew the heap by about 29 MB until the GC reported their namespaces gone.
describe('the registry of names stays bounded and keeps the live limiters', () => {
  it('after 100,000 other names, a live limiter still refuses a conflicting one', async () => {
    const store = new MemoryStore({ maxKeys: 1000 })
    const kept = createLimiter({ algorithm: 'gcra', limit: 3, window: '1m', name: 'kept', store })
    const heapAfter = async (from: number, to: number) => {
      for (let i = from; i < to; i++) {
        createLimiter({ limit: 3, window: '1m', name: `n${i}`, store })
        // each limiter in its own turn, as limiters made per request are
        if (i % 500 === 0) await new Promise((resolve) => setImmediate(resolve))
      }
      for (let i = 0; i < 3; i++) {
        gc()
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      return process.memoryUsage().heapUsed
    }
    const warm = await heapAfter(0, 20_000)
    const after = await heapAfter(20_000, 100_000)
    expect(claimCount(store)).toBeLessThan(20_000)
    // the namespaces' maps and references, and the claims, of 80,000 gone limiters: a few MB
    expect(after - warm).toBeLessThan(8 * 1024 * 1024)
    expect(() =>
      createLimiter({ algorithm: 'fixed-window', limit: 3, window: '1m', name: 'kept', store }),
    ).toThrow(/already used on this store/)
    expect(kept.name).toBe('kept')
    // a gone limiter's name is free again
    expect(() =>
      createLimiter({ algorithm: 'fixed-window', limit: 3, window: '1m', name: 'n5', store }),
    ).not.toThrow()
  }, 60_000)
})
