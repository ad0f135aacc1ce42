// The plugin on a real Redis (a private redis-server started by this file), Fastify 4 and 5.

import { createLimiter } from '@limiter/core'
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { freshPrefix, useRedis } from '../../../test-support/adapter-helpers.js'
import { freePort } from '../../../test-support/redis.js'
import {
  describeRedisContracts,
  expectLoginLimited,
} from '../../../test-support/shared-contracts.js'
import { RedisStore, rateLimit } from '../src/index.js'
import { FASTIFY, harness } from './helpers.js'

const connect = (port: number) => new Redis(port, '127.0.0.1')
const client = useRedis(connect)

describe.each(FASTIFY)('$version on Redis', ({ fastify }) => {
  describeRedisContracts(harness(fastify), {
    client,
    connect,
    store: (c) => new RedisStore({ client: c }),
    createLimiter,
  })

  it('runs the README setup: global, per-route override, exempt, preHandler', async () => {
    const redis = client()
    const prefix = freshPrefix()
    const app = fastify()
    await app.register(rateLimit, { limit: 3, window: '1m', redis, prefix })
    app.get('/', async () => 'home')
    app.get('/export', { config: { rateLimit: { limit: 1, window: '1m' } } }, async () => 'x')
    app.get('/health', { config: { rateLimit: false } }, async () => 'ok')
    app.get('/x', { preHandler: app.rateLimit({ limit: 1, window: '10s' }) }, async () => 'x')
    expect((await app.inject('/export')).statusCode).toBe(200)
    expect((await app.inject('/export')).statusCode).toBe(429)
    expect((await app.inject('/x')).statusCode).toBe(200)
    const limited = await app.inject('/x')
    expect(limited.statusCode).toBe(429)
    expect(limited.headers.ratelimit).toMatch(/^"gc3\/1m";r=1;t=\d+, "gc1\/10s";r=0;/)
    expect((await app.inject('/')).statusCode).toBe(200)
    expect((await app.inject('/')).statusCode).toBe(429) // /x and / used the global 3
    expect((await app.inject('/health')).statusCode).toBe(200)
    const keys = (await redis.keys(`${prefix}*`)).sort()
    expect(keys).toEqual([
      `${prefix}gc1/10s:{GET /x#127.0.0.1}`,
      `${prefix}gc1/1m:{GET /export#127.0.0.1}`,
      `${prefix}gc3/1m:{127.0.0.1}`,
    ])
  })

  it('limits a login route per e-mail with sliding-log, keyed after the body is parsed', async () => {
    const redis = client()
    const prefix = freshPrefix()
    const app = fastify()
    await app.register(rateLimit, { global: false, redis, prefix })
    app.post(
      '/login',
      {
        config: {
          rateLimit: {
            limit: 2,
            window: '15m',
            algorithm: 'sliding-log',
            hook: 'preHandler',
            key: (request) => `${(request.body as { email: string }).email}`,
          },
        },
      },
      async () => 'welcome',
    )
    const login = async (email: string) => {
      const res = await app.inject({ method: 'POST', url: '/login', payload: { email } })
      return { status: res.statusCode, headers: res.headers }
    }
    await expectLoginLimited(login, () => redis.keys(`${prefix}*`), 'POST /login#a@example.com')
  })

  it('two app instances share the counters of a per-route config too', async () => {
    const redis = client()
    const prefix = freshPrefix()
    const makeApp = async () => {
      const app = fastify()
      await app.register(rateLimit, { limit: 3, window: '1m', redis, prefix })
      app.get('/export', { config: { rateLimit: { limit: 2 } } }, async () => 'x')
      return app
    }
    const [a, b] = [await makeApp(), await makeApp()]
    expect((await a.inject('/export')).statusCode).toBe(200)
    expect((await b.inject('/export')).statusCode).toBe(200)
    expect((await a.inject('/export')).statusCode).toBe(429)
    await Promise.all([a.close(), b.close()])
  })

  it("answers 503 when Redis is down and failureMode is 'closed'", async () => {
    const down = new Redis(await freePort(), '127.0.0.1', {
      lazyConnect: true,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    })
    const errors: string[] = []
    const app = fastify()
    await app.register(rateLimit, {
      limit: 5,
      window: '1m',
      redis: down,
      failureMode: 'closed',
      timeout: 100,
      onError: (error) => errors.push(error.code),
    })
    app.get('/', async () => 'ok')
    const res = await app.inject('/')
    expect(res.statusCode).toBe(503)
    expect(res.headers['retry-after']).toMatch(/^\d+$/)
    expect(res.json()).toMatchObject({ status: 503, title: 'Service Unavailable' })
    expect(errors.length).toBeGreaterThan(0)
    down.disconnect()
  })
})
