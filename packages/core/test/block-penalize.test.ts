// limiter.block and limiter.penalize through the public API, on MemoryStore, Redis and Cluster:
// a block refuses every policy until it ends (every process), reset lifts it, it expires by
// itself and never shortens; a penalty counts past the limit and pushes Retry-After out.
import { Cluster, Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type Algorithm,
  createLimiter,
  type LimiterOptions,
  MemoryStore,
  RATE_ALGORITHMS,
  RedisStore,
  type Store,
} from '../src/index.js'
import { keySlot, slotTag } from '../src/stores/cluster-slot.js'
import { withClock } from '../src/testing/index.js'
import { scanKeys, useCluster, useRedis } from './setup/redis.js'

const redis = useRedis()
const cluster = useCluster()

// A second client on the same Redis (and Cluster): another process's worth of connection.
let second: Redis
let secondCluster: Cluster
beforeAll(async () => {
  second = new Redis(redis.server.port, '127.0.0.1')
  secondCluster = new Cluster(cluster.cluster.startupNodes.slice(0, 3))
  await new Promise<void>((resolve, reject) => {
    secondCluster.once('ready', () => resolve())
    secondCluster.once('error', reject)
  })
})
afterAll(() => {
  second?.disconnect()
  secondCluster?.disconnect()
})

let unique = 0
const T0 = 1_800_000_000_000 // a multiple of every window below: windows start here

type Kind = 'MemoryStore' | 'Redis' | 'Cluster'
// Two stores that share state, as two processes' stores do (one MemoryStore is shared).
function twoStores(kind: Kind): [Store, Store] {
  if (kind === 'MemoryStore') {
    const memory = new MemoryStore()
    return [memory, memory]
  }
  if (kind === 'Redis')
    return [new RedisStore({ client: redis.client }), new RedisStore({ client: second })]
  return [new RedisStore({ client: cluster.client }), new RedisStore({ client: secondCluster })]
}
const clientOf = (kind: Kind): Redis | Cluster =>
  kind === 'Cluster' ? cluster.client : redis.client

const LIMITS = [
  { name: 'burst', algorithm: 'gcra', limit: 5, window: '1s' },
  { name: 'daily', algorithm: 'fixed-window', limit: 100, window: '1d' },
  { name: 'inflight', algorithm: 'concurrency', limit: 10, window: '1m' },
] as const

describe.each<Kind>(['MemoryStore', 'Redis', 'Cluster'])('block on %s', (kind) => {
  const setup = (extra: Partial<LimiterOptions> = {}) => {
    let now = T0
    const name = `blk${unique++}`
    const [storeA, storeB] = twoStores(kind)
    const options = { limits: LIMITS, name, blockedCache: false as const, ...extra }
    const a = createLimiter(withClock({ ...options, store: storeA } as LimiterOptions, () => now))
    const b = createLimiter(withClock({ ...options, store: storeB } as LimiterOptions, () => now))
    return { a, b, advance: (ms: number) => (now += ms), name }
  }

  it('refuses every policy, in every process, until it ends, with its Retry-After', async () => {
    const { a, b, advance } = setup()
    expect((await b.consume('u')).allowed).toBe(true)
    await a.block('u', '15m')
    advance(60_000)
    const refused = await b.consume('u')
    expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 840_000 })
    expect(refused.source).toBe('store')
    for (const p of refused.policies)
      expect(p).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 840_000 })
    // nothing was counted meanwhile: the daily policy still holds only the first request
    advance(840_000)
    const after = await b.consume('u')
    expect(after.allowed).toBe(true)
    expect(after.policies[1]?.remaining).toBe(98)
    // other keys are not blocked
    expect((await a.consume('v')).allowed).toBe(true)
  })

  it('is lifted by reset, in every process', async () => {
    const { a, b } = setup()
    await a.block('u', 60_000)
    expect((await b.peek('u')).allowed).toBe(false)
    await b.reset('u')
    expect((await a.consume('u')).allowed).toBe(true)
  })

  it('is never shortened by a shorter block; a longer one extends it', async () => {
    const { a, b, advance } = setup()
    await a.block('u', '10m')
    await b.block('u', '1m')
    expect((await b.peek('u')).retryAfterMs).toBe(600_000)
    advance(100_000)
    await b.block('u', '20m')
    expect((await a.peek('u')).retryAfterMs).toBe(1_200_000)
  })

  it("keeps a policy's own longer wait: Retry-After is honest after the block", async () => {
    const { a, advance } = setup()
    for (let i = 0; i < 5; i++) expect((await a.consume('u')).allowed).toBe(true)
    await a.block('u', 100) // gcra refills one request per 200 ms: its wait outlasts the block
    const refused = await a.consume('u')
    expect(refused.retryAfterMs).toBe(200)
    advance(100)
    expect((await a.consume('u')).allowed).toBe(false)
    advance(100)
    expect((await a.consume('u')).allowed).toBe(true)
  })

  it('never blocks refunds or releases', async () => {
    const { a, advance } = setup()
    const taken = await a.consume('u', 2)
    expect(taken.policies[2]?.remaining).toBe(8)
    await a.block('u', 1000)
    await a.refund('u', 2, taken)
    advance(1000)
    const peek = await a.peek('u')
    expect(peek.allowed).toBe(true)
    // the lease was released and the daily count given back during the block
    expect(peek.policies.map((p) => p.remaining)).toEqual([5, 100, 10])
  })

  it('acquire gives up at once on a blocked key, not polling its concurrency policy', async () => {
    const { a } = setup()
    await a.block('u', '1m')
    const started = performance.now()
    await expect(a.acquire('u', { maxWait: '10s' })).rejects.toMatchObject({
      code: 'ERR_LIMITER_REFUSED',
      decision: { allowed: false, retryAfterMs: 60_000 },
    })
    // polling would have taken the whole 10 s
    expect(performance.now() - started).toBeLessThan(5000)
  })

  it('validates its duration', async () => {
    const { a } = setup()
    for (const bad of [0, -5, 1.5, '2y', 'soon', 366 * 86_400_000])
      await expect(a.block('u', bad as never)).rejects.toMatchObject({ option: 'duration' })
    await expect(a.block('', 1000)).rejects.toMatchObject({ code: 'ERR_LIMITER_KEY' })
  })

  it('one policy: the same, under the key of that policy', async () => {
    let now = T0
    const [storeA, storeB] = twoStores(kind)
    const options = { algorithm: 'sliding-log', limit: 3, window: '1s', name: `one${unique++}` }
    const a = createLimiter(withClock({ ...options, store: storeA } as LimiterOptions, () => now))
    const b = createLimiter(withClock({ ...options, store: storeB } as LimiterOptions, () => now))
    await a.block('u', '5s')
    expect(await b.consume('u', 2)).toMatchObject({
      allowed: false,
      remaining: 0,
      retryAfterMs: 5000,
    })
    now += 5000
    expect(await b.consume('u', 3)).toMatchObject({ allowed: true, remaining: 0 })
  })
})

describe.each<Kind>(['Redis', 'Cluster'])('block on %s, by Redis time', (kind) => {
  // 10 a minute, named `name` + a number, on a store of its own
  const tenPerMinute = (name: string, extra: Partial<LimiterOptions> = {}) =>
    createLimiter({
      limit: 10,
      window: '1m',
      name: `${name}${unique++}`,
      store: new RedisStore({ client: clientOf(kind) }),
      ...extra,
    } as LimiterOptions)
  it('is one key beside the state, same hash tag, expiring when the block ends', async () => {
    const client = clientOf(kind)
    const name = `ttl${unique++}`
    const limiter = createLimiter({
      limits: LIMITS,
      name,
      prefix: 'blk:',
      store: new RedisStore({ client }),
    })
    await limiter.consume('user{1}')
    await limiter.block('user{1}', 2000)
    const keys = await scanKeys(client, `blk:${name}:*`)
    const blockKey = keys.find((k) => k.endsWith(':block'))
    expect(blockKey).toBe(`blk:${name}:burst:gc:{user%7B1%7D}:block`)
    const pttl = await client.pttl(blockKey as string)
    expect(pttl).toBeGreaterThan(0)
    expect(pttl).toBeLessThanOrEqual(2000)
    await limiter.reset('user{1}')
    expect(await client.exists(blockKey as string)).toBe(0)
  })

  it('keeps a block marker until it ends, never shorter, and puts it back if lost', async () => {
    const client = clientOf(kind)
    const name = `mark${unique++}`
    const store = new RedisStore({ client })
    const limiter = createLimiter({ limit: 10, window: '1m', name, store, blockedCache: false })
    await limiter.block('m', '3h')
    const blockKey = (await scanKeys(client, `rl:${name}:*`)).find((k) => k.endsWith(':block'))
    // the marker: the block's namespace + 'blocked' (on a Cluster, + a hash tag of its slot)
    const namespace = (blockKey as string).slice(0, (blockKey as string).indexOf('{'))
    const slot = keySlot(blockKey as string)
    const marker = `${namespace}blocked${kind === 'Redis' ? '' : `{${slotTag(slot)}}`}`
    expect(await scanKeys(client, `${namespace}blocked*`)).toEqual([marker])
    if (kind === 'Cluster') expect(keySlot(marker)).toBe(slot)
    const ends = await client.pexpiretime(blockKey as string)
    expect(await client.pexpiretime(marker)).toBeGreaterThanOrEqual(ends)
    // a shorter block, of this key or another, leaves the marker as long as the longest
    await limiter.block('m', '1s')
    await limiter.block('other', '1s')
    expect(await client.pexpiretime(marker)).toBeGreaterThanOrEqual(ends)
    // lost (deleted by hand, or evicted): the next block of the key puts it back, to its end
    await client.del(marker)
    await limiter.block('m', '1s')
    expect(await client.pexpiretime(marker)).toBeGreaterThanOrEqual(ends)
    expect(await limiter.consume('m')).toMatchObject({ allowed: false, source: 'store' })
  })

  it('limiters of one policy shape batch apart: each sees the blocks of its own keys', async () => {
    const client = clientOf(kind)
    const store = new RedisStore({ client })
    const make = (prefix: string) =>
      createLimiter({ limit: 10, window: '1m', prefix, store, blockedCache: false })
    const [a, b] = [make(`shapeA${unique}:`), make(`shapeB${unique++}:`)]
    await b.block('u', '1m')
    // one turn: a's and b's decisions on the same keys, the blocked one among them
    const keys = ['v', 'u', 'w']
    const decisions = await Promise.all(keys.flatMap((k) => [a.consume(k), b.consume(k)]))
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false, true, true])
  })

  it('a batch of distinct keys refuses its blocked keys only, whatever their slots', async () => {
    const limiter = tenPerMinute('spread', { blockedCache: false })
    const keys = Array.from({ length: 60 }, (_, i) => `k${i}`)
    // one decision each first: the plain path, no key blocked yet
    const first = await Promise.all(keys.map((k) => limiter.consume(k)))
    expect(first.every((d) => d.allowed)).toBe(true)
    for (let i = 0; i < 60; i += 3) await limiter.block(keys[i] as string, '1m')
    const decisions = await Promise.all(keys.map((k) => limiter.consume(k)))
    const refused = keys.filter((_, i) => !decisions[i]?.allowed)
    expect(refused).toEqual(keys.filter((_, i) => i % 3 === 0))
    for (const [i, d] of decisions.entries())
      if (i % 3 !== 0) expect(d).toMatchObject({ allowed: true, remaining: 8 })
  })

  it('the blocked-key cache answers its refusals, and this process lifts it at once', async () => {
    const limiter = tenPerMinute('cache')
    await limiter.block('u', '1m')
    const first = await limiter.consume('u')
    expect(first).toMatchObject({ allowed: false, remaining: 0, source: 'store' })
    expect(first.retryAfterMs).toBeGreaterThan(50_000)
    const second = await limiter.consume('u')
    expect(second).toMatchObject({ allowed: false, remaining: 0, source: 'blocked-cache' })
    expect(second.retryAfterMs).toBeGreaterThan(50_000)
    await limiter.reset('u')
    expect(await limiter.consume('u')).toMatchObject({ allowed: true, source: 'store' })
  })
})

describe('block without store support', () => {
  it('a custom store without block() rejects with a LimiterError naming it', async () => {
    const store = new MemoryStore()
    const custom: Store = {
      consume: (c) => store.consume(c),
      refund: (c) => store.refund(c),
      reset: (c) => store.reset(c),
    }
    const limiter = createLimiter({ limit: 1, window: '1s', store: custom })
    await expect(limiter.block('u', 1000)).rejects.toMatchObject({
      name: 'LimiterError',
      code: 'ERR_LIMITER_UNSUPPORTED',
      message: expect.stringMatching(/limiter\.block needs a store with a block\(\) method/),
    })
    await expect(limiter.penalize('u')).rejects.toMatchObject({ code: 'ERR_LIMITER_UNSUPPORTED' })
    class NamedStore {
      consume = custom.consume
      refund = custom.refund
      reset = custom.reset
    }
    const named = createLimiter({ limit: 1, window: '1s', store: new NamedStore() })
    await expect(named.block('u', 1000)).rejects.toThrow(/this NamedStore store has none/)
  })

  it("failureMode 'local': the local store learns blocks made through this limiter", async () => {
    const down = () => Promise.reject(new Error('down'))
    const failing: Store = { consume: down, refund: down, reset: down, block: down }
    const errors: string[] = []
    const limiter = createLimiter({
      limit: 10,
      window: '1m',
      store: failing,
      failureMode: 'local',
      circuitBreaker: false,
      onError: (e) => errors.push(e.message),
    })
    await expect(limiter.block('u', '1m')).rejects.toThrow(/down/)
    const d = await limiter.consume('u')
    expect(d).toMatchObject({ allowed: false, remaining: 0, source: 'local' })
    expect(d.retryAfterMs).toBeGreaterThan(50_000)
    expect((await limiter.consume('v')).allowed).toBe(true)
    expect(errors.length).toBeGreaterThan(0)
  })
})

describe.each<Kind>(['MemoryStore', 'Redis', 'Cluster'])('penalize on %s', (kind) => {
  const one = (algorithm: Algorithm, extra: Partial<LimiterOptions> = {}) => {
    let now = T0
    const [store] = twoStores(kind)
    const limiter = createLimiter(
      withClock(
        {
          algorithm,
          limit: 5,
          window: '1s',
          name: `pen${unique++}`,
          store,
          blockedCache: false,
          ...extra,
        } as LimiterOptions,
        () => now,
      ),
    )
    return { limiter, advance: (ms: number) => (now += ms) }
  }

  // 7 penalized on a fresh key (limit 5 per 1 s): refused, and for how long, by algorithm.
  const AFTER_SEVEN: Record<string, number> = {
    'fixed-window': 1000, // the window's end
    'sliding-window': 1429, // the next window, until 7 x (1 - elapsed) + 1 <= 5
    'sliding-log': 1000, // the penalty's record leaves the window
    'token-bucket': 600, // TAT = now + 7 x 200 ms; a request passes at TAT + 200 - 1000
    'leaky-bucket': 600,
    gcra: 600,
  }

  it.each(RATE_ALGORITHMS)('%s: counts past the limit and pushes Retry-After out', async (a) => {
    const { limiter, advance } = one(a)
    const d = await limiter.penalize('u', 7)
    expect(d).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: AFTER_SEVEN[a] })
    expect(await limiter.consume('u')).toMatchObject({ allowed: false })
    advance(AFTER_SEVEN[a] as number)
    expect((await limiter.consume('u')).allowed).toBe(true)
  })

  it.each(RATE_ALGORITHMS)('%s: a penalty within the limit leaves room', async (a) => {
    const { limiter } = one(a)
    expect(await limiter.penalize('u')).toMatchObject({ allowed: true, remaining: 4 })
    expect(await limiter.penalize('u', 2)).toMatchObject({ allowed: true, remaining: 2 })
  })

  it('gcra: a penalty pushes the wait at most one window past a full bucket', async () => {
    const { limiter } = one('gcra')
    // TAT capped at now + 5 x 200 + 1000 ms: a request passes at TAT + 200 - 1000
    expect((await limiter.penalize('u', 1_000_000)).retryAfterMs).toBe(1200)
    expect((await limiter.penalize('u', 1_000_000)).retryAfterMs).toBe(1200)
  })

  it('skips concurrency policies, and refuses a limiter of only concurrency policies', async () => {
    let now = T0
    const [store] = twoStores(kind)
    const limiter = createLimiter(
      withClock(
        { limits: LIMITS, name: `penl${unique++}`, store, blockedCache: false } as LimiterOptions,
        () => now,
      ),
    )
    const d = await limiter.penalize('u', 6)
    expect(d.allowed).toBe(false)
    expect(d.retryAfterMs).toBe(400)
    expect(d.policies.map((p) => p.remaining)).toEqual([0, 94, 10])
    now += 400
    expect((await limiter.consume('u')).allowed).toBe(true)
    const leases = createLimiter({ algorithm: 'concurrency', limit: 2, window: '1m', store })
    await expect(leases.penalize('u')).rejects.toMatchObject({
      code: 'ERR_LIMITER_UNSUPPORTED',
      message: expect.stringMatching(/only concurrency policies/),
    })
  })

  it('validates its cost: an integer from 1, not capped by burst', async () => {
    const { limiter } = one('gcra')
    for (const bad of [0, -1, 1.5, Number.NaN, '2', 2 ** 32])
      await expect(limiter.penalize('u', bad as never)).rejects.toMatchObject({
        code: 'ERR_LIMITER_COST',
      })
    expect((await limiter.penalize('u', 50)).allowed).toBe(false)
  })

  it('counts while the key is blocked, and answers with the block', async () => {
    const { limiter, advance } = one('fixed-window', { window: '1m' })
    await limiter.block('u', 1000)
    expect(await limiter.penalize('u', 3)).toMatchObject({ allowed: false, retryAfterMs: 1000 })
    advance(1000)
    expect(await limiter.peek('u')).toMatchObject({ allowed: true, remaining: 2 })
  })
})
