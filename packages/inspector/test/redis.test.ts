// Top refused keys merged across processes through Redis: two limiters of the same name (two
// processes' copies, each with its own inspector and process id) on one redis-server.
import { createLimiter, RedisStore } from '@limiter/core'
import { Redis } from 'ioredis'
import { createClient } from 'redis'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { type RedisProcess, startRedis } from '../../../test-support/redis.js'
import { inspector } from '../src/index.js'
import { readSummaries, type Send, senderOf, writeSummary } from '../src/redis-sync.js'
import { clearOfMinuteEdge } from './minute-edge.js'

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

const sum = (values: readonly number[] | undefined) => (values ?? []).reduce((a, b) => a + b, 0)

describe('the fleet through Redis', () => {
  it('sums decisions per second across processes, each keeping its own', async () => {
    const client = new Redis(server.port, '127.0.0.1')
    const store = new RedisStore({ client })
    const name = `rates-${Date.now()}`
    const prefix = `fleet-${Date.now()}:`
    const a = createLimiter({ name, limit: 2, window: '1m', store })
    const b = createLimiter({ name, limit: 2, window: '1m', store })
    const options = { store, authorize: () => true, redisPrefix: prefix }
    const pageA = inspector({ limiters: [a], ...options })
    const pageB = inspector({ limiters: [b], ...options })
    await refuse(a, 'p', 5) // 2 allowed, 3 refused
    await refuse(b, 'q', 3) // 2 allowed, 1 refused
    await pageA.state() // each writes its own
    await pageB.state()
    await refuse(b, 'q', 2) // 2 more refused in B, written when a page is read
    await pageB.state()
    for (const page of [pageA, pageB]) {
      const state = await page.state()
      expect(state).toMatchObject({ merged: true, processes: 2 })
      const policy = state.policies[0]
      expect(Math.round(sum(policy?.rates.allowed) * 5)).toBe(4)
      expect(Math.round(sum(policy?.rates.refused) * 5)).toBe(6)
    }
    const own = (await pageA.state()).policies[0]?.ownRates
    expect(Math.round(sum(own?.refused) * 5)).toBe(3)
    pageA.close()
    pageB.close()
    await client.quit()
  })

  it('lists a block made in one process on every page, until it is lifted', async () => {
    const client = new Redis(server.port, '127.0.0.1')
    const store = new RedisStore({ client })
    const name = `blocks-${Date.now()}`
    const a = createLimiter({ name, limit: 2, window: '1m', store })
    const b = createLimiter({ name, limit: 2, window: '1m', store })
    const options = { store, authorize: () => true, maskKey: false }
    const pageA = inspector({ limiters: [a], ...options })
    const pageB = inspector({ limiters: [b], ...options })
    await a.block('banned', '10m')
    await b.penalize('noisy', 4)
    const listed = async (page: typeof pageA) =>
      (await page.state()).blocks.map((r) => [r.limiter, r.key, r.kind])
    const both = [
      [name, 'banned', 'block'],
      [name, 'noisy', 'penalty'],
    ]
    // each process writes its blocks to Redis soon after it sees them, without a page read
    await vi.waitFor(async () => expect(await listed(pageB)).toEqual(both), { timeout: 10_000 })
    expect(await listed(pageA)).toEqual(both)
    const key = `rl:inspector:blocks:{${name}}`
    expect(await client.zcard(key)).toBe(2)
    expect(await client.pttl(key)).toBeGreaterThan(9 * 60_000)
    await b.reset('banned') // lifted in B: A's page drops it once A's limiter says so
    // (A's blocked-key cache may answer for up to blockedCache.maxMs, 1 s, as A's consume would)
    await vi.waitFor(
      async () => expect((await pageA.state()).blocks.map((r) => r.key)).toEqual(['noisy']),
      { timeout: 10_000, interval: 200 },
    )
    pageA.close()
    pageB.close()
    await client.quit()
  })
})

describe('top refused keys across processes', () => {
  it('merges every process summary through Redis hashes (ioredis, RedisStore)', async () => {
    await clearOfMinuteEdge()
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
    const keys = await client.keys('rl:inspector:{*')
    expect(keys.length).toBe(3) // one hash per process, one set of processes
    expect(await client.ttl(keys[0] as string)).toBeGreaterThan(15 * 60)
    // and the rates (one hash per minute; two if the test straddled one), the processes' set
    const all = await client.keys('rl:inspector:*')
    expect(all.length).toBeGreaterThanOrEqual(5)
    for (const key of all) expect(await client.pttl(key)).toBeGreaterThan(0)
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

  it('replaces a process summary in one step: a reader between the writes never finds it gone', async () => {
    const client = new Redis(server.port, '127.0.0.1')
    const send = senderOf(client) as Send
    const prefix = `atomic-${Date.now()}:`
    const summary = (n: number) => ({ n, k: 8, items: [{ key: 'a', count: n, error: 0 }] })
    await writeSummary(send, prefix, 'p1', 'policy', 7, summary(1))
    // a reader after every command of the next write: what the page of another process sees
    const seen: number[] = []
    const watched: Send = async (key, args) => {
      const reply = await send(key, args)
      const summaries = await readSummaries(send, prefix, 'policy', 7)
      seen.push(summaries[0]?.items.length === 0 ? 0 : (summaries[0]?.n ?? -1))
      return reply
    }
    await writeSummary(watched, prefix, 'p1', 'policy', 7, summary(2))
    expect(seen.length).toBeGreaterThan(0)
    expect(seen.filter((n) => n !== 1 && n !== 2)).toEqual([])
    expect(seen.at(-1)).toBe(2)
    await client.quit()
  })

  it('keeps a summary whatever its keys: a client key "\\u0000meta" erases nothing', async () => {
    await clearOfMinuteEdge()
    const client = new Redis(server.port, '127.0.0.1')
    const store = new RedisStore({ client })
    const name = `meta-${Date.now()}`
    const limiter = createLimiter({ name, limit: 1, window: '1m', store })
    const options = { store, authorize: () => true, maskKey: false as const }
    const page = inspector({ limiters: [limiter], ...options, redisPrefix: `meta-${Date.now()}:` })
    await refuse(limiter, 'abuser-1', 51) // 50 refused
    await refuse(limiter, '\u0000meta', 2) // 1 refused, a key naming the old layout's data field
    await refuse(limiter, 'summary', 3) // 2 refused, the new layout's data field's name
    const state = await page.state()
    expect(state.merged).toBe(true)
    expect(state.policies[0]?.top['1m']).toEqual([
      { key: 'abuser-1', count: 50, error: 0 },
      { key: 'summary', count: 2, error: 0 },
      { key: '\u0000meta', count: 1, error: 0 },
    ])
    expect(state.policies[0]?.refused['1m']).toBe(53)
    page.close()
    await client.quit()
  })

  it('reads a hash of the older layout (a process of the older version, in a rolling deploy)', async () => {
    const client = new Redis(server.port, '127.0.0.1')
    const send = senderOf(client) as Send
    const prefix = `legacy-${Date.now()}:`
    await writeSummary(send, prefix, 'new', 'policy', 7, {
      n: 4,
      k: 8,
      items: [{ key: 'k:x', count: 4, error: 0 }],
    })
    // the new layout: the data under `summary`, each key under `k:` and the key
    expect(await client.hgetall(`${prefix}{policy}:7:new`)).toEqual({
      summary: '4:8',
      'k:k:x': '4:0',
    })
    const old = `${prefix}{policy}:7:old`
    await client.hset(old, '\u0000meta', '5:8', 'k:x', '3:0', 'summary', '2:0')
    await client.sadd(`${prefix}{policy}:7:procs`, 'old')
    const summaries = await readSummaries(send, prefix, 'policy', 7)
    expect(summaries).toHaveLength(2)
    expect(summaries).toContainEqual({ n: 4, k: 8, items: [{ key: 'k:x', count: 4, error: 0 }] })
    expect(summaries).toContainEqual({
      n: 5,
      k: 8,
      items: [
        { key: 'k:x', count: 3, error: 0 },
        { key: 'summary', count: 2, error: 0 },
      ],
    })
    await client.quit()
  })
})
