// A Redis at its `maxmemory` with `noeviction`: a decision that would grow it fails (and follows
// failureMode) for every algorithm alike. Regression (found from outside): a concurrency policy's
// script wrote first (it dropped expired slots), and Redis checks memory only up to a script's
// first write, so its leases went on growing Redis past the limit (+600 KB on a 1 MB limit for
// 2,000 keys a client chose), where the other algorithms failed as they should.
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RedisProcess, startRedis } from '../../../test-support/redis.js'
import { createLimiter, type LimiterOptions, RedisStore } from '../src/index.js'

let server: RedisProcess
let client: Redis

beforeAll(async () => {
  server = await startRedis(['--maxmemory-policy', 'noeviction'])
  client = new Redis(server.port, '127.0.0.1', { maxRetriesPerRequest: 1 })
})
afterAll(async () => {
  client.disconnect()
  await server.stop()
})

const usedMemory = async (): Promise<number> =>
  Number(/used_memory:(\d+)/.exec(await client.info('memory'))?.[1])

// Empties the server this file started (startRedis, on a free port of its own: never a shared
// Redis), with no memory limit.
async function empty(): Promise<void> {
  await client.config('SET', 'maxmemory', '0')
  await client.flushall()
}

// Fills Redis, then sets maxmemory well under what it holds (its own buffers come and go): every
// write that would grow it is refused.
async function fillUp(): Promise<void> {
  const filler = 'x'.repeat(10_000)
  for (let i = 0; i < 100; i++) await client.set(`filler:${i}`, filler)
  await client.config('SET', 'maxmemory', String((await usedMemory()) - 500_000))
}

// A limiter on this Redis that fails closed on every failure (no breaker to skip calls).
const oomLimiter = (name: string, policy: Partial<LimiterOptions>) =>
  createLimiter({
    ...policy,
    name,
    store: new RedisStore({ client }),
    failureMode: 'closed',
    onError: () => {},
    circuitBreaker: false,
  } as LimiterOptions)

describe('a Redis at maxmemory (noeviction)', () => {
  it.each<[string, Partial<LimiterOptions>]>([
    ['concurrency', { algorithm: 'concurrency', limit: 5, window: '1m' }],
    [
      'gcra and concurrency together',
      {
        limits: [
          { name: 'rate', limit: 100, window: '1m' },
          { name: 'slots', algorithm: 'concurrency', limit: 5, window: '1m' },
        ],
      },
    ],
    ['gcra', { limit: 5, window: '1m' }],
    ['sliding-log', { algorithm: 'sliding-log', limit: 5, window: '1m' }],
    ['fixed-window', { algorithm: 'fixed-window', limit: 5, window: '1m' }],
    ['sliding-window', { algorithm: 'sliding-window', limit: 5, window: '1m' }],
  ])('%s: decisions that would grow it fail closed, and it stays put', async (_, policy) => {
    await empty()
    await fillUp()
    const limiter = oomLimiter(`oom-${_}`, policy)
    const sources = new Set<string>()
    for (let i = 0; i < 300; i++) sources.add((await limiter.consume(`client-${i}`)).source)
    expect([...sources]).toEqual(['fail-closed'])
    // no key a client chose was written (Redis's own memory, its script cache, may move)
    expect(await client.dbsize()).toBe(100)
    await client.config('SET', 'maxmemory', '0')
    await limiter.close()
  })

  // Regression (found from outside): give-backs rode in the same script call as decisions, so a
  // release first in a call let the consumes after it write past the limit, and a consume's
  // refused write failed the release beside it (its lease held for the window)
  it('once Redis refused a call, a release beside consumes frees its slot, and they fail', async () => {
    await empty()
    const limiter = oomLimiter('oom-mixed', { algorithm: 'concurrency', limit: 5, window: '1m' })
    const held = await limiter.consume('held')
    expect(held.source).toBe('store')
    const keys = await client.dbsize()
    await fillUp()
    // the store learns Redis is out of memory from a refused call; from then on for a while,
    // give-backs travel apart (mixed, as usual, a release first let the rest write)
    expect((await limiter.consume('first')).source).toBe('fail-closed')
    const turn = [
      limiter.release('held', held),
      ...Array.from({ length: 100 }, (_, i) => limiter.consume(`mixed-${i}`)),
    ]
    const [, ...decisions] = await Promise.all(turn)
    expect(new Set(decisions.map((d) => (d as { source: string }).source))).toEqual(
      new Set(['fail-closed']),
    )
    // the lease is gone (its key with it), and nothing was written for the new keys
    expect(await client.dbsize()).toBe(keys - 1 + 100)
    await client.config('SET', 'maxmemory', '0')
    await limiter.close()
  })
})
