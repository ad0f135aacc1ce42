// Regression, under @koa/router 12 and 15 on Koa 2 and 3: a limiter on `router.all` kept one
// budget per request method, so a client cycling the methods Node accepts got the limit once for
// each (99 of 3). A limiter's route scope now comes from the methods its layer declares.
import { type IncomingMessage, METHODS, type ServerResponse } from 'node:http'
import type { Middleware } from 'koa'
import request, { type Test } from 'supertest'
import { describe, expect, it } from 'vitest'
import { rateLimit } from '../src/index.js'
import { countingStore, KOA_ROUTERS } from './helpers.js'

type Handler = (req: IncomingMessage, res: ServerResponse) => void

// Every method Node's server hands to the app: CONNECT goes to the server's 'connect' event.
const EVERY_METHOD = METHODS.filter((m) => m !== 'CONNECT')

/** Sends `method` (any Node accepts, e.g. PROPFIND or M-SEARCH) to `path`. */
const send = (app: Handler, method: string, path: string): Test =>
  (request(app) as unknown as Record<string, (url: string) => Test>)[method.toLowerCase()]!(path)

/** The statuses `app` answers to each of `methods` in turn, by status. */
async function cycle(app: Handler, methods: readonly string[], path: (i: number) => string) {
  const statuses: Record<number, number> = {}
  for (const [i, method] of methods.entries()) {
    const { status } = await send(app, method, path(i))
    statuses[status] = (statuses[status] ?? 0) + 1
  }
  return statuses
}

const ok: Middleware = (ctx) => {
  ctx.body = 'ok'
}

describe.each(KOA_ROUTERS)('$version with $router', ({ Koa, Router }) => {
  it('router.all: a client cycling every method gets the limit once in all, on the bare pattern', async () => {
    const store = countingStore()
    const app = new Koa()
    const router = new Router()
    router.all('/api', rateLimit({ limit: 3, window: '1m', store }), ok)
    app.use(router.routes())
    expect(EVERY_METHOD.length).toBeGreaterThan(30)
    expect(await cycle(app.callback(), EVERY_METHOD, () => '/api')).toEqual({
      200: 3,
      429: EVERY_METHOD.length - 3,
    })
    expect(new Set(store.keys)).toEqual(new Set(['/api#127.0.0.1']))
  })

  it('router.all under a prefix: one budget for every method, id and case', async () => {
    const store = countingStore()
    const app = new Koa()
    const router = new Router({ prefix: '/v1' })
    router.all('/items/:id', rateLimit({ limit: 3, window: '1m', store }), ok)
    app.use(router.routes())
    const paths = (i: number) => `/${i % 2 === 0 ? 'v1' : 'V1'}/items/${i}?page=${i}`
    expect(await cycle(app.callback(), EVERY_METHOD, paths)).toEqual({
      200: 3,
      429: EVERY_METHOD.length - 3,
    })
    expect(new Set(store.keys)).toEqual(new Set(['/v1/items/:id#127.0.0.1']))
  })

  it('router.all in a nested router: one budget, the full pattern', async () => {
    const store = countingStore()
    const app = new Koa()
    const parent = new Router()
    const child = new Router()
    child.all('/items', rateLimit({ limit: 3, window: '1m', store }), ok)
    parent.use('/v2', child.routes())
    app.use(parent.routes())
    expect(await cycle(app.callback(), EVERY_METHOD, () => '/v2/items')).toEqual({
      200: 3,
      429: EVERY_METHOD.length - 3,
    })
    expect(new Set(store.keys)).toEqual(new Set(['/v2/items#127.0.0.1']))
  })

  it('a route registered with several methods: one budget, named by those methods', async () => {
    const store = countingStore()
    const app = new Koa()
    const router = new Router()
    router.register(
      '/x',
      ['POST', 'GET', 'PROPFIND'],
      [rateLimit({ limit: 3, window: '1m', store }), ok],
    )
    app.use(router.routes())
    const methods = ['GET', 'POST', 'PROPFIND', 'HEAD', 'GET', 'POST', 'PROPFIND', 'HEAD']
    expect(await cycle(app.callback(), methods, () => '/x')).toEqual({ 200: 3, 429: 5 })
    // HEAD counts as GET; methods in a fixed order, whatever order the route declared them in.
    expect(new Set(store.keys)).toEqual(new Set(['GET,POST,PROPFIND /x#127.0.0.1']))
  })

  it('one limiter on routes of one path registered apart: a budget each, as before', async () => {
    const store = countingStore()
    const limiter = rateLimit({ limit: 1, window: '1m', store })
    const app = new Koa()
    const router = new Router()
    router.get('/items', limiter, ok)
    router.post('/items', limiter, ok)
    router.delete('/items', limiter, ok)
    app.use(router.routes())
    const handler = app.callback()
    expect((await send(handler, 'DELETE', '/items')).status).toBe(200)
    expect((await send(handler, 'POST', '/items')).status).toBe(200)
    expect((await send(handler, 'HEAD', '/items')).status).toBe(200)
    expect((await send(handler, 'GET', '/items')).status).toBe(429)
    expect(store.keys).toEqual([
      'DELETE /items#127.0.0.1',
      'POST /items#127.0.0.1',
      'GET /items#127.0.0.1',
      'GET /items#127.0.0.1',
    ])
  })
})
