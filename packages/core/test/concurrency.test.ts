// Concurrency limits through the public API, in memory and on Redis (standalone and Cluster):
// leases, release, their TTLs, the blocked-key cache, and acquire/run waiting for a slot.
import { type Cluster, Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { freePort } from '../../../test-support/redis.js'
import {
  createLimiter,
  type Decision,
  type Limiter,
  LimiterError,
  type LimiterOptions,
  RedisStore,
} from '../src/index.js'
import { scanKeys, useCluster, useRedis } from './setup/redis.js'
import { sleep, storeCases } from './setup/stores.js'

const redis = useRedis()
const cluster = useCluster(3, 0)
let unique = 0

const STORES = storeCases(redis, cluster)

describe.each(STORES)('%s', (_name, makeStore, client) => {
  const make = (options: Partial<LimiterOptions> = {}): Limiter =>
    createLimiter({
      algorithm: 'concurrency',
      limit: 2,
      window: '10s',
      prefix: `cc${unique++}:`,
      store: makeStore(),
      ...options,
    } as LimiterOptions)

  it('admits up to limit in flight; release lets the next in at once, and twice is once', async () => {
    const limiter = make()
    const [a, b, c] = await Promise.all([
      limiter.consume('k'),
      limiter.consume('k'),
      limiter.consume('k'),
    ])
    expect([a?.allowed, b?.allowed, c?.allowed]).toEqual([true, true, false])
    expect(c).toMatchObject({ remaining: 0, retryAfterMs: 1000 })
    await limiter.release('k', a as Decision)
    await limiter.release('k', a as Decision)
    await limiter.release('k', c as Decision) // a refusal holds no lease
    const d = await limiter.consume('k')
    expect(d).toMatchObject({ allowed: true, remaining: 0 })
    expect((await limiter.consume('k')).allowed).toBe(false)
    // refund with the decision releases too
    await limiter.refund('k', 1, d)
    expect((await limiter.peek('k')).remaining).toBe(1)
    await limiter.reset('k')
    expect((await limiter.peek('k')).remaining).toBe(2)
  })

  it('a lease never released frees its slot when `window` has passed', async () => {
    const limiter = make({ limit: 1, window: 150 })
    expect((await limiter.consume('k')).allowed).toBe(true)
    const refused = await limiter.consume('k')
    expect(refused.allowed).toBe(false)
    expect(refused.retryAfterMs).toBeLessThanOrEqual(150)
    await sleep(refused.retryAfterMs + 20)
    expect((await limiter.consume('k')).allowed).toBe(true)
  })

  it('the Retry-After estimate is configurable, never past the oldest lease expiry', async () => {
    const limiter = make({ limit: 1, window: '1m', retryAfter: '5s' })
    await limiter.consume('k')
    expect((await limiter.consume('k')).retryAfterMs).toBe(5000)
    const short = make({ limit: 1, window: 300, retryAfter: '5s' })
    await short.consume('k')
    expect((await short.consume('k')).retryAfterMs).toBeLessThanOrEqual(300)
  })

  it('with rate policies in `limits`: all or nothing, and release touches only the lease', async () => {
    const limiter = createLimiter({
      limits: [
        { name: 'inflight', algorithm: 'concurrency', limit: 2, window: '10s' },
        { name: 'rate', algorithm: 'fixed-window', limit: 3, window: '1m' },
      ],
      prefix: `cc${unique++}:`,
      store: makeStore(),
    })
    const a = await limiter.consume('k')
    const b = await limiter.consume('k')
    const refused = await limiter.consume('k')
    expect(refused.allowed).toBe(false)
    expect(refused.policies.map((p) => p.allowed)).toEqual([false, true])
    // the refusal counted nowhere: the rate policy still has one left
    expect((await limiter.peek('k')).policies.map((p) => p.remaining)).toEqual([0, 1])
    await limiter.release('k', a)
    await limiter.release('k', b)
    expect((await limiter.peek('k')).policies.map((p) => p.remaining)).toEqual([2, 1])
    const c = await limiter.consume('k')
    expect(c.allowed).toBe(true)
    // now the rate policy refuses, and the lease the request would have taken is not held
    const d = await limiter.consume('k')
    expect(d.policies.map((p) => p.allowed)).toEqual([true, false])
    expect((await limiter.peek('k')).policies.map((p) => p.remaining)).toEqual([1, 0])
  })

  it('a lease keeps the expiry it was taken with when the window changes', async () => {
    // (why the store contract's shorter-window case skips concurrency: a shorter window applies
    // to the leases taken after the change)
    const store = makeStore()
    const prefix = `cc${unique++}:`
    const make = (window: number) =>
      createLimiter({ algorithm: 'concurrency', limit: 1, window, name: 'w', prefix, store })
    const long = make(60_000)
    const short = make(100)
    const held = await long.consume('k')
    expect(held.allowed).toBe(true)
    await sleep(150)
    // the short window has long passed: the lease taken under a minute still holds the slot
    const refused = await short.consume('k')
    expect(refused.allowed).toBe(false)
    expect(refused.resetMs).toBeGreaterThan(59_000)
    await long.release('k', held)
    const taken = await short.consume('k')
    expect(taken).toMatchObject({ allowed: true, resetMs: 100 })
  })

  // Redis only: the keys and TTLs it shows (MemoryStore's expiry is the twin's, which the
  // differential tests compare with the script's)
  it.runIf(client !== undefined)(
    'every key has a TTL, and a released key holds no lease',
    async () => {
      const prefix = `cc${unique++}:`
      const limiter = createLimiter({
        algorithm: 'concurrency',
        limit: 3,
        window: '30s',
        prefix,
        store: makeStore(),
      })
      const taken = await Promise.all(['a', 'b', 'c', 'a', 'a'].map((k) => limiter.consume(k, 1)))
      for (const key of await scanKeys((client as () => Redis | Cluster)(), `${prefix}*`)) {
        const pttl = await (client as () => Redis | Cluster)().pttl(key)
        expect(pttl, key).toBeGreaterThan(0)
        expect(pttl, key).toBeLessThanOrEqual(30_000)
      }
      await Promise.all(
        ['a', 'b', 'c', 'a', 'a'].map((k, i) => limiter.release(k, taken[i] as Decision)),
      )
      expect(await scanKeys((client as () => Redis | Cluster)(), `${prefix}*`)).toEqual([])
    },
  )

  it('acquire waits for a release in this process, and run always releases', async () => {
    const limiter = make({ limit: 1 })
    const held = await limiter.acquire('k')
    const started = performance.now()
    const waiting = limiter.acquire('k', { maxWait: '5s' })
    setTimeout(() => void limiter.release('k', held), 50)
    const next = await waiting
    expect(next.allowed).toBe(true)
    expect(performance.now() - started).toBeLessThan(1000)
    await limiter.release('k', next)
    await expect(
      limiter.run('k', () => {
        throw new Error('boom')
      }),
    ).rejects.toThrow('boom')
    expect((await limiter.peek('k')).remaining).toBe(1)
    expect(await limiter.run('k', (d) => d.remaining)).toBe(0)
    expect((await limiter.peek('k')).remaining).toBe(1)
  })

  it('acquire gives up after maxWait with ERR_LIMITER_REFUSED and the refusal, or at the abort', async () => {
    const limiter = make({ limit: 1 })
    await limiter.acquire('k')
    const started = performance.now()
    const error = await limiter.acquire('k', { maxWait: 120 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LimiterError)
    expect(error).toMatchObject({ code: 'ERR_LIMITER_REFUSED' })
    expect((error as LimiterError).decision).toMatchObject({ allowed: false })
    expect(((error as LimiterError).decision as Decision).retryAfterMs).toBeGreaterThan(0)
    expect(performance.now() - started).toBeGreaterThanOrEqual(110)
    // no maxWait and no maxDelay: refused at once
    await expect(limiter.acquire('k')).rejects.toMatchObject({ code: 'ERR_LIMITER_REFUSED' })
    const controller = new AbortController()
    const waiting = limiter.acquire('k', { maxWait: '10s', signal: controller.signal })
    setTimeout(() => controller.abort(new Error('stop')), 30)
    await expect(waiting).rejects.toThrow('stop')
  })
})

describe("failureMode 'local'", () => {
  it('a lease taken by the local fallback is released there, not leaked for `window`', async () => {
    const client = new Redis(await freePort(), '127.0.0.1', {
      maxRetriesPerRequest: 0,
      lazyConnect: true,
    })
    client.on('error', () => {})
    try {
      const limiter = createLimiter({
        algorithm: 'concurrency',
        limit: 1,
        window: '10m',
        store: new RedisStore({ client }),
        failureMode: 'local',
        onError: () => {},
      })
      for (let i = 0; i < 3; i++) {
        const d = await limiter.consume('k')
        expect(d).toMatchObject({ allowed: true, source: 'local' })
        expect((await limiter.consume('k')).allowed).toBe(false)
        await limiter.release('k', d)
      }
    } finally {
      client.disconnect()
    }
  })
})

describe('option errors', () => {
  it('names the option and the value', () => {
    expect(() =>
      createLimiter({ algorithm: 'concurrency', limit: 2, window: '1s', burst: 3 }),
    ).toThrow(/`burst`.*in flight/)
    expect(() => createLimiter({ algorithm: 'concurrency', limit: 200_000, window: '1s' })).toThrow(
      /`limit`.*at most 100000/,
    )
    expect(() =>
      // @ts-expect-error retryAfter is a 'concurrency' policy's option: a type error too
      createLimiter({ algorithm: 'gcra', limit: 2, window: '1s', retryAfter: '1s' }),
    ).toThrow(/`retryAfter`.*'concurrency'/)
    expect(() =>
      createLimiter({ algorithm: 'concurrency', limit: 2, window: '1s', retryAfter: 'soon' }),
    ).toThrow(/`retryAfter`/)
  })
})
