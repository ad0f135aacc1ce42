// A flood of distinct client keys: MemoryStore stays within maxKeys (1,000,000 keys, RSS
// reported), and on Redis every key written still carries a TTL (50,000 keys, SCAN + PTTL).
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { ALGORITHMS, createLimiter, MemoryStore, RedisStore } from '../src/index.js'
import { useRedis } from './setup/redis.js'

const redis = useRedis()

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void
const mb = (bytes: number) => Math.round(bytes / 1024 / 1024)

describe('a flood of distinct keys', () => {
  it('1,000,000 keys against MemoryStore: size stays within maxKeys, memory stays bounded', async () => {
    const maxKeys = 10_000
    const store = new MemoryStore({ maxKeys })
    const limiter = createLimiter({ limit: 10, window: '1h', store })
    gc()
    const before = process.memoryUsage()
    const started = performance.now()
    let largest = 0
    for (let i = 0; i < 1_000_000; i += 10_000) {
      const batch: Promise<unknown>[] = []
      for (let j = i; j < i + 10_000; j++) batch.push(limiter.consume(`203.0.113.${j}`))
      await Promise.all(batch)
      largest = Math.max(largest, store.size)
    }
    const seconds = (performance.now() - started) / 1000
    const peak = process.memoryUsage()
    gc()
    const after = process.memoryUsage()
    console.log(
      [
        '',
        `MemoryStore flood: 1,000,000 distinct keys in ${seconds.toFixed(1)} s, maxKeys ${maxKeys}, largest size ${largest}`,
        `RSS before ${mb(before.rss)} MB, right after ${mb(peak.rss)} MB, after GC ${mb(after.rss)} MB`,
        `heap used before ${mb(before.heapUsed)} MB, after GC ${mb(after.heapUsed)} MB`,
      ].join('\n'),
    )
    expect(largest).toBeLessThanOrEqual(maxKeys)
    // 1,000,000 live entries would hold well over 100 MB of heap; 10,000 hold a few MB.
    expect(after.heapUsed - before.heapUsed).toBeLessThan(32 * 1024 * 1024)
    // The newest keys are still counted exactly.
    expect((await limiter.peek('203.0.113.999999')).remaining).toBe(9)
    await store.close()
  }, 60_000)

  it('50,000 keys on Redis over every algorithm: every key written has a TTL within its window', async () => {
    const windowMs = 600_000
    const prefix = 'flood:'
    const limiters = ALGORITHMS.map((algorithm) =>
      createLimiter({
        algorithm,
        limit: 5,
        window: windowMs,
        prefix,
        store: new RedisStore({ client: redis.client }),
        failureMode: 'closed',
      }),
    )
    const total = 50_000
    for (let i = 0; i < total; i += 2_000) {
      const batch: Promise<unknown>[] = []
      for (let j = i; j < i + 2_000; j++) {
        const limiter = limiters[j % limiters.length]
        batch.push(
          limiter?.consume(
            `10.${j >> 16}.${(j >> 8) & 255}.${j & 255}`,
            (j % 3) + 1,
          ) as Promise<unknown>,
        )
      }
      await Promise.all(batch)
    }
    const names: string[] = []
    let cursor = '0'
    do {
      const [next, batch] = await redis.client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 5000)
      cursor = next
      names.push(...batch)
    } while (cursor !== '0')
    // Every algorithm writes one key per client.
    expect(names).toHaveLength(total)
    const pipeline = redis.client.pipeline()
    for (const name of names) pipeline.pttl(name)
    const ttls = ((await pipeline.exec()) ?? []).map(([, ttl]) => ttl as number)
    const immortal = ttls.filter((ttl) => ttl < 0).length
    const memory = await redis.client.info('memory')
    console.log(
      `Redis flood: ${total} clients -> ${names.length} keys, ${immortal} without TTL, longest TTL ${Math.max(...ttls)} ms, ${/used_memory_human:(\S+)/.exec(memory)?.[1]} used`,
    )
    expect(immortal).toBe(0)
    // No longer than the time to empty: at most one window, two for sliding-window (its previous
    // window's count weighs on the next one).
    const longest = new Map<string, number>()
    names.forEach((name, i) => {
      const ns = name.slice(0, name.indexOf('{'))
      longest.set(ns, Math.max(longest.get(ns) ?? 0, ttls[i] as number))
    })
    for (const [ns, ttl] of longest) {
      expect(ttl, ns).toBeLessThanOrEqual(ns.startsWith(`${prefix}sw`) ? 2 * windowMs : windowMs)
    }
  }, 60_000)
})
