// rateLimit() on Hono 4 on a real Redis (a private redis-server started by this file): the shared
// Redis and concurrency contracts, and route scopes as keys.
import { createLimiter } from '@limiter/core'
import { Hono } from 'hono'
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { freshPrefix, useRedis } from '../../../test-support/adapter-helpers.js'
import { describeConcurrencyContract } from '../../../test-support/concurrency-contract.js'
import { freePort } from '../../../test-support/redis.js'
import { describeRedisContract } from '../../../test-support/redis-contract.js'
import { RedisStore, rateLimit, userKey } from '../src/index.js'
import { harness, listen } from './helpers.js'

const client = useRedis((port) => new Redis(port, '127.0.0.1'))

describe('hono 4 on Redis', () => {
  describeRedisContract('adapter contract', harness(), {
    client,
    store: () => new RedisStore({ client: client() }),
    unreachable: async () => {
      const port = await freePort()
      return { client: new Redis(port, '127.0.0.1'), address: `127.0.0.1:${port}` }
    },
  })
  describeConcurrencyContract('concurrency and waiting', harness(), {
    store: () => new RedisStore({ client: client() }),
    batching: true,
    createLimiter,
  })

  it('limits a login route per user with sliding-log, keyed by the route pattern', async () => {
    const redis = client()
    const prefix = freshPrefix()
    const app = new Hono()
    app.post(
      '/login/:tenant',
      rateLimit({
        limit: 2,
        window: '15m',
        algorithm: 'sliding-log',
        key: (c) => userKey(c.req.header('x-user') ?? 'anonymous'),
        redis,
        prefix,
      }),
      (c) => c.text('welcome'),
    )
    const { url } = await listen(app)
    const login = (user: string, tenant = 'a') =>
      fetch(`${url}/login/${tenant}`, { method: 'POST', headers: { 'x-user': user } })
    expect((await login('a@example.com')).status).toBe(200)
    // another tenant is the same route: the same budget
    expect((await login('a@example.com', 'b')).status).toBe(200)
    const limited = await login('a@example.com')
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(800)
    expect((await login('b@example.com')).status).toBe(200)
    const keys = await redis.keys(`${prefix}*`)
    expect(keys.some((k) => k.includes('/login/:tenant#user:a@example.com'))).toBe(true)
  })

  it('per-route limiters and the global one keep separate counters in Redis', async () => {
    const redis = client()
    const prefix = freshPrefix()
    const app = new Hono()
    app.use(rateLimit({ limit: 2, window: '1m', redis, prefix }))
    app.get('/a', rateLimit({ limit: 2, window: '1m', redis, prefix }), (c) => c.text('a'))
    app.get('/b', rateLimit({ limit: 1, window: '1m', redis, prefix }), (c) => c.text('b'))
    const { url } = await listen(app)
    const a = await fetch(`${url}/a`)
    // The app's and /a's limiters have the same policy (and name: the route scope is in the key
    // only), and each counted this request once: two equal members, sent once.
    expect(a.headers.get('ratelimit')).toBe('"gc2/1m";r=1;t=30')
    const b = await fetch(`${url}/b`)
    expect(b.status).toBe(200)
    // the app's limiter first (the outer one, as on Node), then the route's: the app's second
    // request, /b's first
    expect(b.headers.get('ratelimit')).toMatch(/^"gc2\/1m";r=0;t=\d+, "gc1\/1m";r=0;t=\d+$/)
    expect((await fetch(`${url}/a`)).status).toBe(429) // the global limit of 2 is used up
    // three counters: the app's (unscoped), /a's and /b's
    expect((await redis.keys(`${prefix}*`)).sort()).toEqual([
      `${prefix}gc1/1m:{/b#127.0.0.1}`,
      `${prefix}gc2/1m:{/a#127.0.0.1}`,
      `${prefix}gc2/1m:{127.0.0.1}`,
    ])
  })
})
