// acquire / run / peek with a priority: a concurrency policy's fleet reserve admits each class
// below its ceiling, as consume does, and a caller above normal does not queue behind callers
// the reserve holds back.
import { describe, expect, it } from 'vitest'
import { createLimiter, type Limiter, LimiterError, type Store } from '../src/index.js'
import { useRedis } from './setup/redis.js'
import { storeCases } from './setup/stores.js'

const redis = useRedis()
let unique = 0

function reserved(store: Store, limit: number): Limiter {
  return createLimiter({
    algorithm: 'concurrency',
    limit,
    window: '1m',
    reserve: { critical: 0.5 },
    name: `acquire-priority${unique++}`,
    store,
  })
}

describe.each(storeCases(redis))('%s', (_name, store) => {
  it('acquire, run and peek read the class: low stops at the reserve, critical does not', async () => {
    const limiter = reserved(store(), 2)
    const key = `k${unique}`
    const low = await limiter.acquire(key, { priority: 'low' })
    expect(low.allowed).toBe(true)
    expect((await limiter.peek(key, { priority: 'low' })).allowed).toBe(false)
    expect((await limiter.peek(key, { priority: 'critical' })).allowed).toBe(true)
    const refusal = await limiter.acquire(key, { priority: 'low', maxWait: 0 }).catch((e) => e)
    expect(refusal).toBeInstanceOf(LimiterError)
    expect(refusal.decision).toMatchObject({ allowed: false, reason: 'reserve' })
    // no priority: normal, held back too
    await expect(limiter.acquire(key, { maxWait: 0 })).rejects.toThrow(LimiterError)
    const ran = await limiter.run(key, (d) => d.remaining, { priority: 'critical', maxWait: 0 })
    expect(ran).toBe(0)
    // run released its slot: critical gets it again
    const critical = await limiter.acquire(key, { priority: 'critical', maxWait: 0 })
    expect(critical.allowed).toBe(true)
    await limiter.release(key, critical)
    await limiter.release(key, low)
  })

  it('a critical caller takes a free slot past low callers the reserve holds in line', async () => {
    const limiter = reserved(store(), 4)
    const key = `q${unique}`
    const lows = [
      await limiter.acquire(key, { priority: 'low' }),
      await limiter.acquire(key, { priority: 'low' }),
    ]
    const settled: string[] = []
    // held back by the reserve (2 of 4 in use, low's ceiling): waits in the key's line
    const waiting = limiter
      .acquire(key, { priority: 'low', maxWait: '1s' })
      .then(
        () => 'admitted',
        () => 'refused',
      )
      .then((how) => settled.push(`low ${how}`))
    // its first ask answered, it is in the line (a slower store only makes this test easier)
    await new Promise((resolve) => setTimeout(resolve, 200))
    const critical = await limiter.acquire(key, { priority: 'critical', maxWait: '5s' })
    settled.push('critical admitted')
    expect(critical.allowed).toBe(true)
    await waiting
    expect(settled).toEqual(['critical admitted', 'low refused'])
    await limiter.release(key, critical)
    for (const d of lows) await limiter.release(key, d)
  })

  it('refuses a bad priority, naming the option', async () => {
    const limiter = reserved(store(), 2)
    await expect(limiter.acquire('x', { priority: 'urgent' as never })).rejects.toThrow(
      /`priority`/,
    )
  })
})
