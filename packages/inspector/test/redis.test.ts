// Top refused keys merged across processes through Redis: two limiters of the same name (two
// processes' copies, each with its own inspector and process id) on one redis-server.
import { createLimiter, RedisStore } from '@limiter/core'
import { Redis } from 'ioredis'
import { createClient } from 'redis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RedisProcess, startRedis } from '../../../test-support/redis.js'
import { inspector } from '../src/index.js'

let server: RedisProcess
beforeAll(async () => {
  server = await startRedis()
})
afterAll(async () => {
  await server.stop()
})

async function refuse(limiter: ReturnType<typeof createLimiter>, key: string, times: number) {
  for (let i = 0; i < times; i++) await limiter.consume(key)
}

describe('top refused keys across processes', () => {
  it('merges every process summary through Redis hashes (ioredis, RedisStore)', async () => {
    const client = new Redis(server.port, '127.0.0.1')
    const store = new RedisStore({ client })
    const name = `merge-${Date.now()}`
    const a = createLimiter({ name, limit: 1, window: '1m', store })
    const b = createLimiter({ name, limit: 1, window: '1m', store })
    const pageA = inspector({ limiters: [a], store, authorize: () => true, maskKey: false })
    const pageB = inspector({ limiters: [b], store, authorize: () => true, maskKey: false })
    await refuse(a, 'x', 6) // 1 allowed, 5 refused, in "process" A
    await refuse(b, 'x', 3) // 3 refused in B
    await refuse(b, 'y', 3) // 1 allowed, 2 refused in B
    await pageB.state() // B writes its summary (it also does every 5 s)
    const state = await pageA.state()
    expect(state.merged).toBe(true)
    expect(state.policies[0]?.top['1m']).toEqual([
      { key: 'x', count: 8, error: 0 },
      { key: 'y', count: 2, error: 0 },
    ])
    expect(state.policies[0]?.refused['15m']).toBe(10)
    const keys = await client.keys('rl:inspector:*')
    expect(keys.length).toBe(3) // one hash per process, one set of processes
    expect(await client.ttl(keys[0] as string)).toBeGreaterThan(15 * 60)
    pageA.close()
    pageB.close()
    await client.quit()
  })

  it('reads the same hashes with node-redis, and says so when Redis fails', async () => {
    const client = createClient({ url: server.url })
    await client.connect()
    const limiter = createLimiter({ name: `merge-nr-${Date.now()}`, limit: 1, window: '1m' })
    const page = inspector({
      limiters: [limiter],
      store: client,
      authorize: () => true,
      maskKey: false,
    })
    await refuse(limiter, 'z', 4)
    const state = await page.state()
    expect(state.merged).toBe(true)
    expect(state.policies[0]?.top['5m']).toEqual([{ key: 'z', count: 3, error: 0 }])
    await client.quit()
    const fallback = await page.state()
    expect(fallback.merged).toBe(false)
    expect(fallback.redisError).toBeTruthy()
    expect(fallback.policies[0]?.top['5m']).toEqual([{ key: 'z', count: 3, error: 0 }])
    page.close()
  })
})
