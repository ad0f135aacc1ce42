// A reset or refund made in another process takes effect in this one within blockedCache.maxMs
// (1 s by default): the cache used to hold a refusal for its whole Retry-After (975 s here).
import { type ChildProcess, fork } from 'node:child_process'
import { afterEach, describe, expect, it } from 'vitest'
import { watchLoad } from '../../../test-support/load.js'
import { createLimiter, type Decision, RedisStore } from '../src/index.js'
import { fixture, requireBuilt } from './setup/processes.js'
import { useRedis } from './setup/redis.js'

const CHILD = fixture('blocked-child.mjs')
const redis = useRedis()
const children: ChildProcess[] = []

requireBuilt()
afterEach(() => {
  for (const child of children.splice(0)) child.kill()
})

async function otherProcess(maxMs = ''): Promise<(key: string) => Promise<Decision>> {
  const child = fork(CHILD, [String(redis.server.port), maxMs], { stdio: 'ignore' })
  children.push(child)
  await new Promise<void>((resolve) => child.once('message', () => resolve()))
  return (key) =>
    new Promise((resolve) => {
      child.once('message', (decision) => resolve(decision as Decision))
      child.send({ consume: key })
    })
}

describe.each(['reset', 'refund'] as const)('a %s in another process', (change) => {
  it('lets the key in here within 1 s, though the refusal said 975 s', async () => {
    // maxMs (1 s) plus 150 ms for the round trips, the slack scaled by the measured load (at
    // most x5: 1.75 s, far below the 975 s a cache that ignored maxMs would refuse for)
    const load = await watchLoad({ cap: 5 })
    const consumeThere = await otherProcess()
    const key = `alice-${change}`
    expect((await consumeThere(key)).allowed).toBe(true)
    const refused = await consumeThere(key)
    expect(refused).toMatchObject({ allowed: false, source: 'store' })
    expect(refused.retryAfterMs).toBeGreaterThan(970_000)
    // Cached: the next refusal does not ask Redis.
    expect(await consumeThere(key)).toMatchObject({ allowed: false, source: 'blocked-cache' })

    const here = createLimiter({
      algorithm: 'fixed-window',
      limit: 1,
      window: '975s',
      name: 'login',
      store: new RedisStore({ client: redis.client }),
    })
    if (change === 'reset') await here.reset(key)
    else await here.refund(key)
    const changedAt = Date.now()
    let admitted: Decision | undefined
    while (Date.now() - changedAt < 3000) {
      const d = await consumeThere(key)
      if (d.allowed) {
        admitted = d
        break
      }
      // While cached, the refusal keeps the store's honest Retry-After.
      expect(d.retryAfterMs).toBeGreaterThan(970_000)
      await new Promise((r) => setTimeout(r, 50))
    }
    expect(admitted?.source).toBe('store')
    const tookMs = Date.now() - changedAt
    load.stop()
    expect(tookMs, load.describe(1000, 150)).toBeLessThanOrEqual(load.budget(1000, 150))
  })
})

it('blockedCache.maxMs sets how long a refusal is trusted', async () => {
  const consumeThere = await otherProcess('200')
  await consumeThere('bob')
  await consumeThere('bob')
  await new RedisStore({ client: redis.client }).reset({
    namespace: 'rl:login:fw:',
    key: 'bob',
    policy: { algorithm: 'fixed-window', limit: 1, windowMs: 975_000, burst: 1 },
  })
  await new Promise((r) => setTimeout(r, 250))
  expect((await consumeThere('bob')).allowed).toBe(true)
})

// A call still on its way when this limiter resets, refunds or blocks the key: its refusal was
// decided before, so it is not cached (before: the next request was refused from the cache for
// up to maxMs after a reset, or told the refusal's short Retry-After after a block).
describe('a refusal decided before a change made here', () => {
  const limiterOn = (window: string) =>
    createLimiter({
      limit: 1,
      window,
      name: `inflight-${window}`,
      store: new RedisStore({ client: redis.client }),
    })

  it('is not cached after a reset: the next request is admitted', async () => {
    const limiter = limiterOn('1m')
    const key = `reset-race-${Date.now()}`
    expect((await limiter.consume(key)).allowed).toBe(true)
    const inFlight = limiter.consume(key)
    await limiter.reset(key)
    expect((await inFlight).allowed).toBe(false)
    expect(await limiter.consume(key)).toMatchObject({ allowed: true, source: 'store' })
  })

  it('is not cached after a block: the next request is told the block', async () => {
    const limiter = limiterOn('3s')
    const key = `block-race-${Date.now()}`
    expect((await limiter.consume(key)).allowed).toBe(true)
    const inFlight = limiter.consume(key)
    await limiter.block(key, '10m')
    expect((await inFlight).allowed).toBe(false)
    const next = await limiter.consume(key)
    expect(next.allowed).toBe(false)
    expect(next.retryAfterMs).toBeGreaterThan(500_000)
  })
})
