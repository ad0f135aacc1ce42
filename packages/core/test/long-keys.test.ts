// A client cannot make a key big: MemoryStore and RedisStore's blocked-key cache hold a key over
// 200 bytes as its digest (one rule, boundedKey). Measured on the heap, after a full GC.

import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { afterAll, describe, expect, it } from 'vitest'
import { createLimiter, MemoryStore, RedisStore } from '../src/index.js'
import { useRedis } from './setup/redis.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void
const redis = useRedis()
const stores: MemoryStore[] = []
afterAll(async () => {
  for (const s of stores) await s.close()
})

function heapMb(): number {
  gc()
  gc()
  return process.memoryUsage().heapUsed / 2 ** 20
}

// A fresh string of `kb` kB per call, sharing nothing with the others.
const longKey = (i: number, kb: number): string => `${i}:${'k'.repeat(kb * 1024)}`

describe('MemoryStore', () => {
  it('150 distinct 200 kB keys do not stay on the heap (was 30 MB)', async () => {
    const store = new MemoryStore()
    stores.push(store)
    const limiter = createLimiter({ limit: 5, window: '1h', store })
    const before = heapMb()
    for (let i = 0; i < 150; i++) await limiter.consume(longKey(i, 200))
    const grown = heapMb() - before
    expect(store.size).toBe(150)
    expect(grown).toBeLessThan(3)
  })

  it('two long keys that differ anywhere keep separate counters; the same long key shares one', async () => {
    const store = new MemoryStore()
    stores.push(store)
    const limiter = createLimiter({ limit: 2, window: '1h', store })
    const base = 'x'.repeat(1000)
    for (const key of [`${base}a`, `${base}b`, `a${base}`]) {
      expect((await limiter.consume(key)).allowed).toBe(true)
      expect((await limiter.consume(`${key}`)).allowed).toBe(true)
      expect((await limiter.consume(key.slice(0))).allowed).toBe(false)
    }
    await limiter.reset(`${base}a`)
    expect((await limiter.consume(`${base}a`)).allowed).toBe(true)
    expect((await limiter.consume(`${base}b`)).allowed).toBe(false)
  })
})

describe("RedisStore's blocked-key cache", () => {
  it('300 blocked 100 kB keys do not stay on the heap (was 30 MB)', async () => {
    const limiter = createLimiter({
      limit: 1,
      window: '1h',
      prefix: 'long-keys:',
      store: new RedisStore({ client: redis.client }),
      // Counts, not time: a deadline a busy machine cannot reach (a fired one answers 'open',
      // and the key is never blocked), and refusals cached for longer than the loops take (by
      // default 1 s: on a busy machine the first keys' entries expired before they were counted).
      timeout: 30_000,
      blockedCache: { maxMs: '10m' },
    })
    const before = heapMb()
    for (let i = 0; i < 300; i++) {
      await limiter.consume(longKey(i, 100))
      expect((await limiter.consume(longKey(i, 100))).source).toBe('store')
    }
    const grown = heapMb() - before
    let cached = 0
    for (let i = 0; i < 300; i++)
      if ((await limiter.consume(longKey(i, 100))).source === 'blocked-cache') cached++
    expect(cached).toBe(300)
    expect(grown).toBeLessThan(3)
  })
})
