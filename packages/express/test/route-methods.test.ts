// Regression, on Express 4 and 5: a limiter on an all-methods route kept one budget per request
// method, so a client cycling the methods Node accepts got the limit once for each (99 of 3).
// A limiter's route scope now comes from the methods its route declares, never from the request.
import { METHODS } from 'node:http'
import type { Express, RequestHandler } from 'express'
import request, { type Test } from 'supertest'
import { describe, expect, it } from 'vitest'
import { rateLimit } from '../src/index.js'
import { countingStore, EXPRESS } from './helpers.js'

// Every method Node's server hands to the app: CONNECT goes to the server's 'connect' event.
const EVERY_METHOD = METHODS.filter((m) => m !== 'CONNECT')

/** Sends `method` (any Node accepts, e.g. PROPFIND or M-SEARCH) to `path`. */
const send = (app: Express, method: string, path: string): Test =>
  (request(app) as unknown as Record<string, (url: string) => Test>)[method.toLowerCase()]!(path)

/** The statuses `app` answers to each of `methods` in turn, by status. */
async function cycle(app: Express, methods: readonly string[], path: (i: number) => string) {
  const statuses: Record<number, number> = {}
  for (const [i, method] of methods.entries()) {
    const { status } = await send(app, method, path(i))
    statuses[status] = (statuses[status] ?? 0) + 1
  }
  return statuses
}

const ok: RequestHandler = (_req, res) => {
  res.send('ok')
}

describe.each(EXPRESS)('$version', ({ express, version }) => {
  it('app.all: a client cycling every method gets the limit once in all, on the bare pattern', async () => {
    const store = countingStore()
    const app = express()
    app.all('/api', rateLimit({ limit: 3, window: '1m', store }), ok)
    expect(EVERY_METHOD.length).toBeGreaterThan(30)
    expect(await cycle(app, EVERY_METHOD, () => '/api')).toEqual({
      200: 3,
      429: EVERY_METHOD.length - 3,
    })
    expect(new Set(store.keys)).toEqual(new Set(['/api#127.0.0.1']))
  })

  it('Router.all mounted at a path: one budget for every method, id and mount-path case', async () => {
    const store = countingStore()
    const app = express()
    const router = express.Router()
    router.all('/items/:id', rateLimit({ limit: 3, window: '1m', store }), ok)
    app.use('/v1', router)
    const paths = (i: number) => `/${i % 2 === 0 ? 'v1' : 'V1'}/items/${i}?page=${i}`
    expect(await cycle(app, EVERY_METHOD, paths)).toEqual({ 200: 3, 429: EVERY_METHOD.length - 3 })
    expect(new Set(store.keys)).toEqual(new Set(['/v1/items/:id#127.0.0.1']))
  })

  it('route().all(limiter) before method handlers: one budget for the route', async () => {
    const store = countingStore()
    const app = express()
    app
      .route('/docs')
      .all(rateLimit({ limit: 3, window: '1m', store }))
      .get(ok)
      .post(ok)
      .put(ok)
    const methods = ['GET', 'POST', 'PUT', 'HEAD', 'GET', 'POST', 'PUT', 'HEAD']
    expect(await cycle(app, methods, () => '/docs')).toEqual({ 200: 3, 429: 5 })
    expect(new Set(store.keys)).toEqual(new Set(['/docs#127.0.0.1']))
  })

  // Regression (found from outside): the scope was the mount path as matched, so a limiter
  // mounted at a wildcard or a parameter gave every URL under it a budget of its own
  it.each([
    [
      'a wildcard',
      (v: string) => (v === 'express 4' ? '/api/*' : '/api/*splat'),
      (i: number) => `/api/x${i}/y`,
    ],
    ['a parameter', () => '/users/:id', (i: number) => `/users/${i}/posts`],
    ['a parameter, percent-encoded', () => '/users/:id', (i: number) => `/users/%4${i % 10}/posts`],
    // (found from outside against the first version: values that are part of the literal path,
    // and a parameter before a wildcard, which Express 4 lists after it)
    [
      'a parameter, valued like the path',
      () => '/users/:id',
      (i: number) => `/users/${'users'.slice(0, i)}/x`,
    ],
    [
      'a parameter, valued as a segment of it',
      () => '/api/v1/:id',
      (i: number) => `/api/v1/${['a', 'api', 'v', 'v1', '1'][i - 1]}/x`,
    ],
    [
      'a parameter before a wildcard',
      (v: string) => (v === 'express 4' ? '/:tenant/*' : '/:tenant/*rest'),
      (i: number) => `/t${i}/x/y`,
    ],
  ])('a limiter mounted at %s keeps one budget for every value', async (_, mount, path) => {
    const store = countingStore()
    const app = express()
    app.use(mount(version), rateLimit({ limit: 2, window: '1m', store }))
    app.use(ok)
    const statuses: number[] = []
    for (let i = 1; i <= 5; i++) statuses.push((await request(app).get(path(i))).status)
    expect(statuses).toEqual([200, 200, 429, 429, 429])
    expect(new Set(store.keys).size).toBe(1)
  })

  it('a limiter wrapped in a function of its own counts by its mount path: one budget', async () => {
    const store = countingStore()
    const limiter = rateLimit({ limit: 3, window: '1m', store })
    const app = express()
    app.all('/wrapped', (req, res, next) => limiter(req, res, next), ok)
    expect(await cycle(app, EVERY_METHOD, () => '/wrapped')).toEqual({
      200: 3,
      429: EVERY_METHOD.length - 3,
    })
    expect(new Set(store.keys)).toEqual(new Set(['127.0.0.1']))
  })

  it('a limiter after routes that call next() keeps one budget: req.route is stale there', async () => {
    const store = countingStore()
    const app = express()
    const pass: RequestHandler = (_req, _res, next) => next()
    app.get('/a', pass)
    app.get('/b', pass)
    app.get('/c/:id', pass)
    app.use(rateLimit({ limit: 3, window: '1m', store }))
    app.use(ok)
    const paths = ['/a', '/b', '/c/1', '/c/2', '/a', '/b']
    expect(
      await cycle(
        app,
        paths.map(() => 'GET'),
        (i) => paths[i] as string,
      ),
    ).toEqual({
      200: 3,
      429: 3,
    })
    expect(new Set(store.keys)).toEqual(new Set(['127.0.0.1']))
  })

  it('one limiter on several methods of one route: one budget, named by those methods', async () => {
    const store = countingStore()
    const limiter = rateLimit({ limit: 3, window: '1m', store })
    const app = express()
    app.route('/x').post(limiter, ok).get(limiter, ok).delete(ok)
    const methods = ['GET', 'POST', 'HEAD', 'GET', 'POST', 'HEAD', 'GET', 'POST', 'HEAD']
    expect(await cycle(app, methods, () => '/x')).toEqual({ 200: 3, 429: 6 })
    // DELETE is the route's, but the limiter is not on it.
    expect((await send(app, 'DELETE', '/x')).status).toBe(200)
    // HEAD counts as GET; methods in a fixed order, whatever order the route declared them in.
    expect(new Set(store.keys)).toEqual(new Set(['GET,POST /x#127.0.0.1']))
  })

  it('a limiter on one method of a route keeps the scope it always had', async () => {
    const store = countingStore()
    const app = express()
    app
      .route('/login')
      .get(ok)
      .post(rateLimit({ limit: 1, window: '1m', store }), ok)
    expect((await send(app, 'POST', '/login')).status).toBe(200)
    expect((await send(app, 'GET', '/login')).status).toBe(200)
    expect((await send(app, 'POST', '/login')).status).toBe(429)
    expect(store.keys).toEqual(['POST /login#127.0.0.1', 'POST /login#127.0.0.1'])
  })

  it('separately registered routes keep a budget each, as routes of two patterns do', async () => {
    const store = countingStore()
    const limiter = rateLimit({ limit: 1, window: '1m', store })
    const app = express()
    app.get('/items', limiter, ok)
    app.post('/items', limiter, ok)
    expect((await send(app, 'GET', '/items')).status).toBe(200)
    expect((await send(app, 'POST', '/items')).status).toBe(200)
    expect((await send(app, 'HEAD', '/items')).status).toBe(429)
    expect(store.keys).toEqual([
      'GET /items#127.0.0.1',
      'POST /items#127.0.0.1',
      'GET /items#127.0.0.1',
    ])
  })
})
