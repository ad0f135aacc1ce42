// Regression: `app.register(rateLimit, ...)` without `await`, then routes at the same level, left
// those routes with no limiter at all (they were declared before the plugin loaded, so its onRoute
// hook never saw them). They are limited now, whatever the order of register and route.
import { describe, expect, it } from 'vitest'
import { warningsDuring } from '../../../test-support/adapter-helpers.js'
import { rateLimit } from '../src/index.js'
import { countingStore, FASTIFY } from './helpers.js'

const statuses = async (
  app: { inject(url: string): Promise<{ statusCode: number }> },
  url: string,
  n: number,
) => {
  const out: number[] = []
  for (let i = 0; i < n; i++) out.push((await app.inject(url)).statusCode)
  return out
}

describe.each(FASTIFY)('$version: routes declared before the plugin loaded', ({ fastify }) => {
  it('register without await, then a route: the route is limited', async () => {
    const store = countingStore()
    const app = fastify()
    app.register(rateLimit, { limit: 2, window: '1m', store })
    app.get('/a', async () => 'a')
    expect(await statuses(app, '/a', 3)).toEqual([200, 200, 429])
    expect(store.consumes).toBe(3)
    await app.close()
  })

  it('reading the route config warns nothing (request.routeConfig is deprecated)', async () => {
    const warnings = await warningsDuring(async () => {
      const app = fastify()
      app.register(rateLimit, { limit: 5, window: '1m' })
      app.get('/a', async () => 'a')
      expect((await app.inject('/a')).statusCode).toBe(200)
      await app.close()
    })
    expect(warnings.map((w) => w.message)).toEqual([])
  })

  it('its own config.rateLimit and its exemption hold too', async () => {
    const store = countingStore()
    const app = fastify()
    app.register(rateLimit, { limit: 5, window: '1m', store })
    app.get('/own', { config: { rateLimit: { limit: 1, window: '1m' } } }, async () => 'own')
    app.get('/free', { config: { rateLimit: false } }, async () => 'free')
    expect(await statuses(app, '/own', 2)).toEqual([200, 429])
    expect(await statuses(app, '/free', 7)).toEqual([200, 200, 200, 200, 200, 200, 200])
    expect(store.keys).toEqual(['GET /own#127.0.0.1', 'GET /own#127.0.0.1'])
    const limited = await app.inject('/own')
    expect(limited.headers['ratelimit-policy']).toBe('"gc1/1m";q=1;w=60')
    await app.close()
  })

  it('a child plugin registered before the limiter: its routes are limited', async () => {
    const app = fastify()
    app.register(async (child) => {
      child.get('/child', async () => 'c')
    })
    app.register(rateLimit, { limit: 1, window: '1m' })
    expect(await statuses(app, '/child', 2)).toEqual([200, 429])
    await app.close()
  })

  it('a route declared after the plugin loaded is counted once, not twice', async () => {
    const store = countingStore()
    const app = fastify()
    await app.register(rateLimit, { limit: 2, window: '1m', store })
    app.get('/b', async () => 'b')
    expect(await statuses(app, '/b', 3)).toEqual([200, 200, 429])
    expect(store.consumes).toBe(3)
    await app.close()
  })

  it('global: false limits only the late routes that ask', async () => {
    const app = fastify()
    app.register(rateLimit, { global: false, window: '1m' })
    app.get('/plain', async () => 'p')
    app.get('/asks', { config: { rateLimit: { limit: 1 } } }, async () => 'a')
    expect(await statuses(app, '/plain', 3)).toEqual([200, 200, 200])
    expect(await statuses(app, '/asks', 2)).toEqual([200, 429])
    await app.close()
  })

  it('an unmatched URL (404) is not counted, as before', async () => {
    const store = countingStore()
    const app = fastify()
    app.register(rateLimit, { limit: 1, window: '1m', store })
    app.get('/a', async () => 'a')
    expect(await statuses(app, '/nope', 3)).toEqual([404, 404, 404])
    expect(store.consumes).toBe(0)
    await app.close()
  })

  it('a bad late config.rateLimit fails its requests, naming the route and the fix', async () => {
    const app = fastify()
    app.register(rateLimit, { limit: 1, window: '1m' })
    app.get('/bad', { config: { rateLimit: { limit: -1 } } }, async () => 'x')
    app.get('/phase', { config: { rateLimit: { limit: 1, hook: 'preHandler' } } }, async () => 'x')
    for (const url of ['/bad', '/phase']) {
      const res = await app.inject(url)
      expect(res.statusCode).toBe(500)
      expect(res.json().message).toContain(`GET ${url}`)
      expect(res.json().message).toContain('await app.register(rateLimit')
    }
    await app.close()
  })
})

describe.each(FASTIFY)('$version: a key that reads the body in onRequest', ({ fastify }) => {
  it('fails with a hint to use the preHandler hook', async () => {
    const app = fastify()
    await app.register(rateLimit, {
      limit: 1,
      window: '1m',
      key: (request) => (request.body as { email: string }).email,
    })
    app.post('/login', async () => 'ok')
    const res = await app.inject({ method: 'POST', url: '/login', payload: { email: 'a@b.c' } })
    expect(res.statusCode).toBe(500)
    expect(res.json().message).toMatch(/^rateLimit option `key` threw: /)
    expect(res.json().message).toContain("use `hook: 'preHandler'` to key on the body")
  })

  it('with hook: preHandler the body is there, and no hint is added to other errors', async () => {
    const app = fastify()
    await app.register(rateLimit, {
      limit: 1,
      window: '1m',
      hook: 'preHandler',
      key: (request) => (request.body as { email: string }).email,
    })
    app.post('/login', async () => 'ok')
    const send = () => app.inject({ method: 'POST', url: '/login', payload: { email: 'a@b.c' } })
    expect((await send()).statusCode).toBe(200)
    expect((await send()).statusCode).toBe(429)
    const missing = await app.inject({ method: 'POST', url: '/login', payload: {} })
    expect(missing.statusCode).toBe(500)
    expect(missing.json().message).not.toContain('preHandler')
  })
})
