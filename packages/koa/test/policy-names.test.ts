// Regression, under @koa/router 12 and 15 on Koa 2 and 3: a route limiter with several policies
// answered `RateLimit-Policy: "route-a GET /r";...` (the route scope in each member's name),
// while the README shows the policies' own names. The scope belongs to the counter's key only.
import { MemoryStore } from '@limiter/core'
import request from 'supertest'
import { describe, expect, it } from 'vitest'
import { rateLimit } from '../src/index.js'
import { KOA_ROUTERS } from './helpers.js'

describe.each(KOA_ROUTERS)('$version with $router', ({ Koa, Router }) => {
  it("a route limiter's headers and problem body name its policies as given", async () => {
    const store = new MemoryStore()
    const app = new Koa()
    const router = new Router()
    const limits = [
      { name: 'route-a', limit: 1, window: '1m' },
      { name: 'route-b', limit: 5, window: '1h' },
    ]
    router.get('/r', rateLimit({ limits, store }), (ctx) => {
      ctx.body = 'r'
    })
    router.get('/q', rateLimit({ limits, store }), (ctx) => {
      ctx.body = 'q'
    })
    app.use(router.routes())
    const server = app.callback()
    const first = await request(server).get('/r')
    expect(first.headers['ratelimit-policy']).toBe('"route-a";q=1;w=60, "route-b";q=5;w=3600')
    const refused = await request(server).get('/r')
    expect(refused.status).toBe(429)
    expect(refused.body['violated-policies']).toEqual(['route-a'])
    // the route scope is still in the counters' keys: /q has a budget of its own
    expect((await request(server).get('/q')).status).toBe(200)
  })
})
