// rateLimit() on a real Redis (a private redis-server started by this file), Koa 2 and 3.
import Router from '@koa/router'
import { createLimiter } from '@limiter/core'
import { Redis } from 'ioredis'
import request from 'supertest'
import { describe, expect, it } from 'vitest'
import { freshPrefix, useRedis } from '../../../test-support/adapter-helpers.js'
import {
  describeRedisContracts,
  expectLoginLimited,
} from '../../../test-support/shared-contracts.js'
import { RedisStore, rateLimit, userKey } from '../src/index.js'
import { harness, KOA } from './helpers.js'

const connect = (port: number) => new Redis(port, '127.0.0.1')
const client = useRedis(connect)

describe.each(KOA)('$version on Redis', ({ Koa }) => {
  describeRedisContracts(harness(Koa), {
    client,
    connect,
    store: (c) => new RedisStore({ client: c }),
    createLimiter,
  })

  it('limits a login route per user with sliding-log', async () => {
    const redis = client()
    const prefix = freshPrefix()
    const app = new Koa()
    const router = new Router()
    router.post(
      '/login',
      rateLimit({
        limit: 2,
        window: '15m',
        algorithm: 'sliding-log',
        key: (ctx) => userKey(ctx.get('x-user')),
        redis,
        prefix,
      }),
      (ctx) => {
        ctx.body = 'welcome'
      },
    )
    app.use(router.routes())
    const login = (user: string) => request(app.callback()).post('/login').set('x-user', user)
    await expectLoginLimited(
      login,
      () => redis.keys(`${prefix}*`),
      'POST /login#user:a@example.com',
    )
  })

  it('per-route limiters and the global one keep separate counters in Redis', async () => {
    const redis = client()
    const prefix = freshPrefix()
    const app = new Koa()
    const router = new Router()
    app.use(rateLimit({ limit: 2, window: '1m', redis, prefix }))
    router.get('/a', rateLimit({ limit: 2, window: '1m', redis, prefix }), (ctx) => {
      ctx.body = 'a'
    })
    router.get('/b', rateLimit({ limit: 1, window: '1m', redis, prefix }), (ctx) => {
      ctx.body = 'b'
    })
    app.use(router.routes())
    const a = await request(app.callback()).get('/a')
    expect(a.headers.ratelimit).toMatch(/^"gc2\/1m";r=1;t=\d+$/) // two equal members, sent once
    const b = await request(app.callback()).get('/b')
    expect(b.status).toBe(200)
    expect(b.headers.ratelimit).toMatch(/^"gc2\/1m";r=0;t=\d+, "gc1\/1m";r=0;/) // the global's second, /b's first
    expect((await request(app.callback()).get('/a')).status).toBe(429) // the global limit of 2 is used up
  })
})

describe('Koa 2 and Koa 3 side by side on Redis', () => {
  it('the same definition in a Koa 2 app and a Koa 3 app shares one counter', async () => {
    const redis = client()
    const prefix = freshPrefix()
    const makeApp = (Koa: (typeof KOA)[number]['Koa']) => {
      const app = new Koa()
      app.use(rateLimit({ limit: 2, window: '1m', algorithm: 'gcra', redis, prefix }))
      app.use((ctx) => {
        ctx.body = 'ok'
      })
      return app.callback()
    }
    const a = makeApp(KOA[0].Koa)
    const b = makeApp(KOA[1].Koa)
    expect((await request(a).get('/')).status).toBe(200)
    expect((await request(b).get('/')).status).toBe(200)
    expect((await request(a).get('/')).status).toBe(429)
    expect((await request(b).get('/')).status).toBe(429)
  })
})
