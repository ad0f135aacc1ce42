// Route scopes under @koa/router 12 and 15, on Koa 2 and 3: per-route limiters count per route
// pattern and never share counters with each other or with the global limiter.
import { MemoryStore } from '@limiter/core'
import { withClock } from '@limiter/core/testing'
import request from 'supertest'
import { describe, expect, it } from 'vitest'
import { rateLimit } from '../src/index.js'
import { countingStore, KOA_ROUTERS } from './helpers.js'

describe.each(KOA_ROUTERS)('$version with $router', ({ Koa, Router }) => {
  it('per-route limiters and a global one never share counters, even with one store', async () => {
    const store = new MemoryStore()
    const app = new Koa()
    const router = new Router()
    app.use(rateLimit({ limit: 2, window: '1m', store }))
    router.get('/a', rateLimit({ limit: 2, window: '1m', store }), (ctx) => {
      ctx.body = 'a'
    })
    router.get('/b', rateLimit({ limit: 2, window: '1m', store }), (ctx) => {
      ctx.body = 'b'
    })
    app.use(router.routes())
    const a = await request(app.callback()).get('/a')
    // The global and /a limiters have the same policy (and name: the route scope is in the key
    // only), and each counted this request once: two equal members, sent once.
    expect(a.headers.ratelimit).toMatch(/^"gc2\/1m";r=1;t=\d+$/)
    const b = await request(app.callback()).get('/b')
    expect(b.status).toBe(200)
    // the global limiter's second request, /b's first
    expect(b.headers.ratelimit).toMatch(/^"gc2\/1m";r=0;t=\d+, "gc2\/1m";r=1;t=\d+$/)
  })

  it('the README search route: token-bucket with a burst, per client IP', async () => {
    const app = new Koa()
    const router = new Router()
    const now = 1_000_000
    router.get(
      '/search',
      // A frozen clock: no refill between the requests, however slow the machine.
      rateLimit(
        withClock({ limit: 10, window: '1s', algorithm: 'token-bucket', burst: 20 }, () => now),
      ),
      (ctx) => {
        ctx.body = { q: ctx.query.q, remaining: ctx.state.rateLimit?.remaining }
      },
    )
    app.use(router.routes())
    const statuses: number[] = []
    for (let i = 0; i < 21; i++)
      statuses.push((await request(app.callback()).get('/search')).status)
    expect(statuses.filter((s) => s === 200)).toHaveLength(20)
    expect(statuses.at(-1)).toBe(429)
  })

  it('one limiter instance on two routes counts per route; limiters named alike share', async () => {
    const store = new MemoryStore()
    const perRoute = rateLimit({ limit: 1, window: '1m', store })
    const shared = rateLimit({ limit: 1, window: '1m', store, name: 'shared' })
    const sharedToo = rateLimit({ limit: 1, window: '1m', store, name: 'shared' })
    const app = new Koa()
    const router = new Router()
    const ok = (ctx: { body: unknown }) => {
      ctx.body = 'ok'
    }
    router.get('/x', perRoute, ok)
    router.get('/y', perRoute, ok)
    router.get('/s1', shared, ok)
    router.get('/s2', sharedToo, ok)
    app.use(router.routes())
    const get = (path: string) => request(app.callback()).get(path)
    expect((await get('/x')).status).toBe(200)
    expect((await get('/y')).status).toBe(200)
    expect((await get('/x')).status).toBe(429)
    expect((await get('/s1')).status).toBe(200)
    expect((await get('/s2')).status).toBe(429)
  })

  it('uses the route pattern under the prefix, not the raw URL; HEAD counts with GET', async () => {
    const store = countingStore()
    const app = new Koa()
    const router = new Router({ prefix: '/api' })
    router.get('/users/:id', rateLimit({ limit: 3, window: '1m', store }), (ctx) => {
      ctx.body = `user ${ctx.params.id}`
    })
    app.use(router.routes())
    expect((await request(app.callback()).get('/api/users/1')).status).toBe(200)
    expect((await request(app.callback()).head('/api/users/2')).status).toBe(200)
    // @koa/router matches case-insensitively by default: still the same pattern, the same counter.
    expect((await request(app.callback()).get('/API/users/3')).status).toBe(200)
    expect((await request(app.callback()).get('/api/users/4')).status).toBe(429)
    expect(new Set(store.keys)).toEqual(new Set(['GET /api/users/:id#127.0.0.1']))
  })

  it('a method per counter: POST and GET on one pattern count apart', async () => {
    const store = countingStore()
    const limiter = rateLimit({ limit: 1, window: '1m', store })
    const app = new Koa()
    const router = new Router()
    router.get('/items', limiter, (ctx) => {
      ctx.body = 'list'
    })
    router.post('/items', limiter, (ctx) => {
      ctx.body = 'created'
    })
    app.use(router.routes())
    expect((await request(app.callback()).get('/items')).status).toBe(200)
    expect((await request(app.callback()).post('/items')).status).toBe(200)
    expect(store.keys).toEqual(['GET /items#127.0.0.1', 'POST /items#127.0.0.1'])
  })

  it('in a nested router, the full pattern', async () => {
    const store = countingStore()
    const app = new Koa()
    const parent = new Router()
    const child = new Router()
    child.get('/items/:id', rateLimit({ limit: 1, window: '1m', store }), (ctx) => {
      ctx.body = 'item'
    })
    parent.use('/v1', child.routes())
    app.use(parent.routes())
    expect((await request(app.callback()).get('/v1/items/7')).status).toBe(200)
    expect((await request(app.callback()).get('/v1/items/8')).status).toBe(429)
    expect(store.keys).toEqual(['GET /v1/items/:id#127.0.0.1', 'GET /v1/items/:id#127.0.0.1'])
  })

  it('router.use(limiter) is scoped to the router prefix or path, for every method', async () => {
    const store = countingStore()
    const app = new Koa()
    const api = new Router({ prefix: '/api' })
    api.use(rateLimit({ limit: 3, window: '1m', store }))
    api.use('/admin', rateLimit({ limit: 5, window: '1m', store }))
    api.get('/items', (ctx) => {
      ctx.body = 'list'
    })
    api.post('/items', (ctx) => {
      ctx.body = 'created'
    })
    api.get('/admin/stats', (ctx) => {
      ctx.body = 'stats'
    })
    app.use(api.routes())
    const call = (method: 'get' | 'post', path: string) => request(app.callback())[method](path)
    expect((await call('get', '/api/admin/stats')).status).toBe(200)
    expect((await call('get', '/api/items')).status).toBe(200)
    expect((await call('post', '/api/items')).status).toBe(200)
    expect((await call('get', '/api/items')).status).toBe(429)
    expect(store.keys).toEqual([
      '/api#127.0.0.1',
      '/api/admin#127.0.0.1',
      '/api#127.0.0.1',
      '/api#127.0.0.1',
      '/api#127.0.0.1',
    ])
  })

  it('a limiter after the router sees no stale route: it stays global', async () => {
    const store = countingStore()
    const app = new Koa()
    const router = new Router()
    router.get('/a', async (ctx, next) => {
      ctx.set('x-route', 'a')
      await next()
    })
    app.use(router.routes())
    app.use(rateLimit({ limit: 5, window: '1m', store }))
    app.use((ctx) => {
      ctx.body = 'end'
    })
    await request(app.callback()).get('/a')
    expect(store.keys).toEqual(['127.0.0.1'])
  })
})
