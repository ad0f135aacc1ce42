// RedisStore on a real Redis: TTLs, key layout, script embedding and NOSCRIPT recovery.

import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
// @ts-expect-error: a plain .mjs build script without types
import { render } from '../scripts/embed-lua.mjs'
import {
  ALGORITHMS,
  type Algorithm,
  createLimiter,
  encodeTag,
  type LimiterError,
  MAX_TAG_BYTES,
  RedisStore,
  redisKeys,
  SCRIPTS,
} from '../src/index.js'
import { scanKeys, useRedis } from './setup/redis.js'

const redis = useRedis()

/** A limiter of `limit` a minute on the test Redis, and the Redis key of user key `a`. */
function limiterOn(algorithm: Algorithm, limit: number, prefix: string) {
  const store = new RedisStore({ client: redis.client })
  const limiter = createLimiter({ algorithm, limit, window: '1m', prefix, store })
  const [key] = redisKeys(algorithm, `${prefix}${limiter.name}:`, 'a') as [string]
  return { limiter, key }
}

describe('RedisStore', () => {
  it('the generated script module is up to date with lua/', () => {
    const committed = readFileSync(
      fileURLToPath(new URL('../src/stores/scripts.generated.ts', import.meta.url)),
      'utf8',
    )
    expect(committed, 'run `pnpm --filter @limiter/core generate`').toBe(render())
  })

  it('SCRIPT LOAD returns the embedded SHA-1 of every script', async () => {
    for (const script of Object.values(SCRIPTS)) {
      expect(await redis.client.script('LOAD', script.source)).toBe(script.sha1)
    }
  })

  it('names the Redis version it needs when the server lacks PEXPIRETIME (Redis 6.2)', async () => {
    // A client that answers like Redis 6.2 running gcra.lua.
    const old = new Error(
      'ERR user_script:1: Unknown Redis command called from script script: 0123, on @user_script:1.',
    )
    const client = {
      evalsha: () => Promise.reject(old),
      eval: () => Promise.reject(old),
      del: () => Promise.resolve(0),
    }
    const errors: LimiterError[] = []
    const limiter = createLimiter({
      algorithm: 'gcra',
      limit: 5,
      window: '1s',
      store: new RedisStore({ client }),
      onError: (error) => errors.push(error),
    })
    const decision = await limiter.consume('a')
    expect(decision.allowed).toBe(true) // failureMode 'open'
    expect(errors[0]?.message).toMatch(/use Redis 7\.0 or newer, or Valkey 7\.2 or newer/)
    expect(errors[0]?.cause).toBe(old)
  })

  it('answers through the public Store interface too (a store wrapping RedisStore)', async () => {
    const store = new RedisStore({ client: redis.client })
    const policy = createLimiter({ algorithm: 'sliding-log', limit: 2, window: '1m' }).policy
    const call = { policy, namespace: 'pub:', key: 'k', cost: 1 }
    const first = await store.consume(call)
    expect(first).toMatchObject({ allowed: true, remaining: 1 })
    expect(typeof first.ticket).toBe('string')
    await store.consume(call)
    expect(await store.consume(call)).toMatchObject({ allowed: false, remaining: 0 })
    await expect(store.refund({ ...call, ticket: first.ticket })).resolves.toBeUndefined()
    expect(await store.consume(call)).toMatchObject({ allowed: true, remaining: 0 })
  })

  it.each(['gcra', 'fixed-window'] as const)(
    '%s keeps its state in the key expiry: the value is a shared small integer',
    async (algorithm) => {
      const { limiter, key } = limiterOn(algorithm, 100, `exp${algorithm}:`)
      await limiter.consume('a')
      const second = await limiter.consume('a')
      // One request of 600 ms (gcra) or a count of 2 (fixed-window): no timestamp in the value.
      expect(await redis.client.get(key)).toBe(algorithm === 'gcra' ? '0' : '2')
      expect(await redis.client.object('ENCODING', key)).toBe('int')
      const expiresAt = Number(await redis.client.call('PEXPIRETIME', key))
      const [seconds, micros] = (await redis.client.time()) as unknown as [string, string]
      const nowMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
      // The expiry is the state's end: within a few ms of what the decision reported.
      expect(Math.abs(expiresAt - nowMs - second.resetMs)).toBeLessThan(50)
    },
  )

  it.each(ALGORITHMS)(
    '%s treats a key in another format as empty instead of failing',
    async (algorithm) => {
      const { limiter, key } = limiterOn(algorithm, 3, `fmt${algorithm}:`)
      await redis.client.set(key, 'not a state', 'PX', 60_000)
      const decision = await limiter.consume('a')
      expect(decision).toMatchObject({ allowed: true, remaining: 2 })
      expect(await limiter.consume('a')).toMatchObject({ allowed: true, remaining: 1 })
    },
  )

  it.each(ALGORITHMS)(
    '%s treats a key of another Redis type as empty, without failing the rest of its batch',
    async (algorithm) => {
      const { limiter, key } = limiterOn(algorithm, 3, `type${algorithm}:`)
      await redis.client.hset(key, 'f', 'v')
      // Same turn: one batch holding the foreign key, an ordinary key, then the foreign key again.
      const [a, b, again] = await Promise.all([
        limiter.consume('a'),
        limiter.consume('b'),
        limiter.consume('a'),
      ])
      expect(a).toMatchObject({ allowed: true, remaining: 2 })
      expect(b).toMatchObject({ allowed: true, remaining: 2 })
      expect(again).toMatchObject({ allowed: true, remaining: 1 })
      expect(await redis.client.type(key)).toBe(algorithm === 'concurrency' ? 'zset' : 'string')
      expect(await redis.client.pttl(key)).toBeGreaterThan(0)
      expect(await limiter.peek('a')).toMatchObject({ remaining: 1 })
    },
  )

  it.each(ALGORITHMS)(
    '%s: every key has a TTL no longer than its time to empty, after a mixed workload',
    async (algorithm) => {
      const prefix = `ttl${algorithm}:`
      const limiter = createLimiter({
        algorithm,
        limit: 5,
        window: '30s',
        prefix,
        store: new RedisStore({ client: redis.client }),
        blockedCache: false,
      })
      const users = Array.from({ length: 13 }, (_, i) => `user${i}`)
      for (let i = 0; i < 300; i++) {
        const key = users[i % 13] as string
        if (i % 17 === 0) await limiter.refund(key, (i % 2) + 1)
        else if (i % 29 === 0) await limiter.reset(key)
        else await limiter.consume(key, (i % 3) + 1)
      }
      const keys = await scanKeys(redis.client, `${prefix}*`)
      expect(keys.length).toBeGreaterThan(0)
      for (const user of users) {
        const { resetMs } = await limiter.peek(user)
        for (const key of redisKeys(algorithm, `${prefix}${limiter.name}:`, user)) {
          const pttl = await redis.client.pttl(key)
          if (pttl === -2) continue // no state: nothing to forget
          expect(pttl, key).toBeGreaterThan(0)
          expect(pttl, key).toBeLessThanOrEqual(resetMs + 1)
        }
      }
      for (const key of keys) expect(await redis.client.pttl(key), key).not.toBe(-1)
    },
  )

  it('keys of one user key share one hash tag; braces cannot break it; long keys are hashed', () => {
    for (const key of ['plain', 'a}b{c', '}{', '{x}', 'k'.repeat(1_000_000)]) {
      const keys = redisKeys('sliding-log', 'rl:sl5/1s:', key)
      const tags = keys.map((k) => /\{([^}]*)\}/.exec(k)?.[1])
      expect(new Set(tags).size).toBe(1)
      expect(tags[0]).toBe(encodeTag(key))
      for (const k of keys) expect(Buffer.byteLength(k)).toBeLessThan(MAX_TAG_BYTES + 40)
    }
    expect(encodeTag('a}b')).not.toBe(encodeTag('a%7Db'))
    expect(encodeTag('x'.repeat(300))).toMatch(/^%H[\w-]{43}$/)
  })

  it('a 1 MB key works and is stored under a bounded name', async () => {
    const limiter = createLimiter({
      algorithm: 'gcra',
      limit: 1,
      window: '1m',
      prefix: 'huge:',
      store: new RedisStore({ client: redis.client }),
    })
    const huge = `${'z'.repeat(1024 * 1024)}{}`
    expect((await limiter.consume(huge)).allowed).toBe(true)
    expect((await limiter.consume(huge)).allowed).toBe(false)
    expect((await limiter.consume(`${huge}!`)).allowed).toBe(true)
    for (const key of await scanKeys(redis.client, 'huge:*')) expect(key.length).toBeLessThan(120)
  })

  it('sends a full batch at once, in the turn that filled it', async () => {
    let sent = 0
    const real = redis.client
    const counting = {
      evalsha: (...args: unknown[]) => {
        sent++
        return (real.evalsha as (...a: unknown[]) => Promise<unknown>)(...args)
      },
      eval: (...args: unknown[]) => (real.eval as (...a: unknown[]) => Promise<unknown>)(...args),
      del: (...args: unknown[]) => (real.del as (...a: unknown[]) => Promise<number>)(...args),
    }
    const limiter = createLimiter({
      algorithm: 'gcra',
      limit: 1000,
      window: '1m',
      prefix: 'early:',
      store: new RedisStore({ client: counting as never }),
    })
    const pending = Array.from({ length: 70 }, (_, i) => limiter.consume(`k${i}`))
    // Two full batches of 32 are on their way already; the last 6 go at the end of the turn.
    expect(sent).toBe(2)
    const decisions = await Promise.all(pending)
    expect(sent).toBe(3)
    expect(decisions.every((d) => d.allowed && d.remaining === 999)).toBe(true)
  })

  it('scripts write absolute expiries only (a relative one costs Redis a command rewrite)', async () => {
    await redis.client.config('RESETSTAT')
    for (const algorithm of ALGORITHMS) {
      const limiter = createLimiter({
        algorithm,
        limit: 3,
        window: '1m',
        prefix: 'abs:',
        store: new RedisStore({ client: redis.client }),
        blockedCache: false,
      })
      for (let i = 0; i < 5; i++) await Promise.all([limiter.consume('a'), limiter.consume('b', 2)])
      await limiter.refund('a', 1)
    }
    const stats = await redis.client.info('commandstats')
    expect(stats).toMatch(/cmdstat_(pexpireat|set):/)
    expect(stats).not.toMatch(/cmdstat_(pexpire|expire|setex|psetex):/)
  })

  it('a busy turn goes out as batches as large as what is out already, in order', async () => {
    await redis.client.script('LOAD', SCRIPTS['fixed-window'].source)
    await redis.client.config('RESETSTAT')
    const { limiter } = limiterOn('fixed-window', 150, 'split:')
    const decisions = await Promise.all(Array.from({ length: 300 }, () => limiter.consume('k')))
    // A batch goes once it holds what is out (at least 32, at most the default maxSize, 128):
    // 32 (0 out), 32 (32 out), 64, 128, then the 44 left at the end of the turn.
    const stats = await redis.client.info('commandstats')
    expect(Number(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1])).toBe(5)
    expect(decisions.map((d) => d.allowed)).toEqual(Array.from({ length: 300 }, (_, i) => i < 150))
    expect(decisions.slice(0, 150).map((d) => d.remaining)).toEqual(
      Array.from({ length: 150 }, (_, i) => 149 - i),
    )
  })

  it('reads a batch of distinct keys with one MGET; a key that comes again sees the batch', async () => {
    const shapes = {
      gcra: { algorithm: 'gcra', limit: 1, window: '1m' },
      'fixed-window': { algorithm: 'fixed-window', limit: 1, window: '1m' },
      'two limits': {
        limits: [
          { name: 'minute', algorithm: 'gcra', limit: 1, window: '1m' },
          { name: 'day', algorithm: 'fixed-window', limit: 5, window: '1d' },
        ],
      },
    } as const
    const mgets = async () =>
      Number(/cmdstat_mget:calls=(\d+)/.exec(await redis.client.info('commandstats'))?.[1] ?? 0)
    for (const [shape, options] of Object.entries(shapes)) {
      const store = new RedisStore({ client: redis.client })
      const limiter = createLimiter({ ...options, prefix: `ahead:${shape}:`, store })
      const consume = (keys: string[]) =>
        Promise.all(keys.map((k) => limiter.consume(k))).then((ds) => ds.map((d) => d.allowed))
      await redis.client.config('RESETSTAT')
      expect(await consume(['a', 'b', 'c']), shape).toEqual([true, true, true])
      expect(await mgets(), shape).toBe(1)
      // 'd' comes again after 'e': read in turn, it sees its first request's admission
      await redis.client.config('RESETSTAT')
      expect(await consume(['d', 'e', 'd']), shape).toEqual([true, true, false])
      expect(await consume(['a', 'f']), shape).toEqual([false, true])
      expect(await mgets(), shape).toBe(1)
    }
  })

  it('batch.maxSize caps every batch, below 32 too', async () => {
    await redis.client.script('LOAD', SCRIPTS['fixed-window'].source)
    for (const [maxSize, calls] of [
      [8, 13], // 12 of 8, then the 4 left
      [48, 3], // 32 (0 out), 32 (32 out), then the 36 left, short of 48 (64 out)
      [1000, 3], // 32, 32, then the 36 left, short of 64
    ] as const) {
      await redis.client.config('RESETSTAT')
      const limiter = createLimiter({
        algorithm: 'fixed-window',
        limit: 1000,
        window: '1m',
        prefix: `cap${maxSize}:`,
        store: new RedisStore({ client: redis.client, batch: { maxSize } }),
      })
      await Promise.all(Array.from({ length: 100 }, () => limiter.consume('k')))
      const stats = await redis.client.info('commandstats')
      expect(Number(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1])).toBe(calls)
    }
  })

  it('recovers from SCRIPT FLUSH transparently: zero failed decisions', async () => {
    const errors: unknown[] = []
    const limiter = createLimiter({
      algorithm: 'sliding-log',
      limit: 1_000_000,
      window: '1m',
      store: new RedisStore({ client: redis.client }),
      failureMode: 'closed',
      onError: (error) => errors.push(error),
    })
    await redis.client.config('RESETSTAT')
    // A flush sent just before every fourth round's batch (same connection, so it lands first),
    // and one on a timer that lands wherever it does.
    const flusher = setInterval(() => void redis.client.script('FLUSH'), 5)
    try {
      for (let round = 0; round < 40; round++) {
        if (round % 4 === 0) void redis.client.script('FLUSH')
        const decisions = await Promise.all(
          Array.from({ length: 50 }, (_, i) => limiter.consume(`nf${i % 7}`)),
        )
        expect(decisions.every((d) => d.allowed)).toBe(true)
      }
    } finally {
      clearInterval(flusher)
    }
    // Each flushed batch was answered NOSCRIPT, then run by EVAL.
    const stats = await redis.client.info('commandstats')
    expect(Number(/cmdstat_eval:calls=(\d+)/.exec(stats)?.[1] ?? 0)).toBeGreaterThanOrEqual(10)
    expect(errors).toEqual([])
  })

  it('never modifies the client it is given', () => {
    const ownBefore = Object.getOwnPropertyNames(redis.client).sort()
    const store = new RedisStore({ client: redis.client })
    void store
    expect(Object.getOwnPropertyNames(redis.client).sort()).toEqual(ownBefore)
  })

  it('rejects a client that is not a Redis client, naming the option', () => {
    expect(() => new RedisStore({ client: {} as never })).toThrow(/`client`/)
    expect(() => new RedisStore(undefined as never)).toThrow(TypeError)
    // node-redis's command methods alone are not a client: no connection state, no slot map
    const halfNodeRedis = { sendCommand: async () => 1, evalSha: async () => 1 }
    expect(() => new RedisStore({ client: halfNodeRedis as never })).toThrow(
      /`client`.*ioredis Redis or Cluster client, or a node-redis client from createClient\(\) or createCluster\(\)/,
    )
  })
})
