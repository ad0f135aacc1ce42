// rateLimit() on a real Redis (a private redis-server started by this file), Koa 2 and 3.
import Router from '@koa/router'
import { Redis } from 'ioredis'
import request from 'supertest'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RedisProcess, startRedis } from '../../../test-support/redis.js'
import { RedisStore, rateLimit, userKey } from '../src/index.js'
import { countingStore, KOA } from './helpers.js'

let server: RedisProcess
let redis: Redis

beforeAll(async () => {
  server = await startRedis()
  redis = new Redis(server.port, '127.0.0.1')
})

afterAll(async () => {
  redis?.disconnect()
  await server?.stop()
})

let run = 0
/** A prefix of its own for each test, so tests never see each other's counters. */
const freshPrefix = () => `t${++run}:`

describe.each(KOA)('$version on Redis', ({ Koa }) => {
  it('limits a login route per user with sliding-log', async () => {
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
    expect((await login('a@example.com')).status).toBe(200)
    expect((await login('a@example.com')).status).toBe(200)
    const limited = await login('a@example.com')
    expect(limited.status).toBe(429)
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(800)
    expect((await login('b@example.com')).status).toBe(200)
    const keys = await redis.keys(`${prefix}*`)
    expect(keys.some((k) => k.includes('POST /login#user:a@example.com'))).toBe(true)
  })

  it('two app instances with the same definition share one counter', async () => {
    const prefix = freshPrefix()
    const makeApp = () => {
      const app = new Koa()
      app.use(rateLimit({ limit: 3, window: '1m', redis, prefix }))
      app.use((ctx) => {
        ctx.body = 'ok'
      })
      return app.callback()
    }
    const [a, b] = [makeApp(), makeApp()]
    expect((await request(a).get('/')).status).toBe(200)
    expect((await request(b).get('/')).status).toBe(200)
    expect((await request(a).get('/')).headers.ratelimit).toMatch(/;r=0;/)
    expect((await request(b).get('/')).status).toBe(429)
  })

  it('per-route limiters and the global one keep separate counters in Redis', async () => {
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
    expect(a.headers.ratelimit).toMatch(/^"sw2\.60000";r=1;t=\d+, "sw2\.60000 GET \/a";r=1;t=\d+$/)
    const b = await request(app.callback()).get('/b')
    expect(b.status).toBe(200)
    expect(b.headers.ratelimit).toMatch(/"sw1\.60000 GET \/b";r=0;/)
    expect((await request(app.callback()).get('/a')).status).toBe(429) // the global limit of 2 is used up
  })

  it('skipFailedRequests refunds exactly the failed request on sliding-log', async () => {
    const store = countingStore(new RedisStore({ client: redis }))
    const app = new Koa()
    const router = new Router()
    router.get(
      '/',
      rateLimit({
        limit: 2,
        window: '1m',
        algorithm: 'sliding-log',
        store,
        prefix: freshPrefix(),
        skipFailedRequests: true,
      }),
      (ctx) => {
        ctx.status = ctx.query.fail === undefined ? 200 : 500
        ctx.body = 'done'
      },
    )
    app.use(router.routes())
    const get = (path: string) => request(app.callback()).get(path)
    for (let i = 0; i < 3; i++) expect((await get('/?fail=1')).status).toBe(500)
    await new Promise((r) => setTimeout(r, 50))
    expect(store.refunds).toBe(3)
    expect((await get('/')).status).toBe(200)
    expect((await get('/')).status).toBe(200)
    expect((await get('/')).status).toBe(429)
  })
})

describe('Koa 2 and Koa 3 side by side on Redis', () => {
  it('the same definition in a Koa 2 app and a Koa 3 app shares one counter', async () => {
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
