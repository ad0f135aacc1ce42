// Per-route limiters, through fastify.inject on Fastify 4 and 5: config.rateLimit overrides and
// exemptions, global: false, app.rateLimit(), route scopes, the client IP and refunds.
import { MemoryStore } from '@limiter/core'
import { describe, expect, it } from 'vitest'
import { warningsDuring } from '../../../test-support/adapter-helpers.js'
import { ipKey, type RateLimitPluginOptions, rateLimit } from '../src/index.js'
import { countingStore, FASTIFY, type Factory } from './helpers.js'

const tick = () => new Promise((r) => setTimeout(r, 20))

async function registered(fastify: Factory, options: RateLimitPluginOptions) {
  const app = fastify()
  await app.register(rateLimit, options)
  return app
}

describe.each(FASTIFY)('$version', ({ fastify }) => {
  describe('per-route config', () => {
    it("a route's config.rateLimit replaces the global limiter for that route", async () => {
      const store = countingStore()
      const app = await registered(fastify, { limit: 1, window: '1m', store })
      app.get('/', async () => 'home')
      app.get('/export', { config: { rateLimit: { limit: 2, window: '1m' } } }, async () => 'x')
      expect((await app.inject('/')).statusCode).toBe(200)
      expect((await app.inject('/')).statusCode).toBe(429)
      const first = await app.inject('/export')
      expect(first.statusCode).toBe(200)
      expect(first.headers['ratelimit-policy']).toBe('"gc2/1m";q=2;w=60')
      expect((await app.inject('/export')).statusCode).toBe(200)
      expect((await app.inject('/export')).statusCode).toBe(429)
      expect(store.keys).toEqual([
        '127.0.0.1',
        '127.0.0.1',
        'GET /export#127.0.0.1',
        'GET /export#127.0.0.1',
        'GET /export#127.0.0.1',
      ])
    })

    it('config.rateLimit: false exempts a route', async () => {
      const store = countingStore()
      const app = await registered(fastify, { limit: 1, window: '1m', store })
      app.get('/health', { config: { rateLimit: false } }, async () => 'ok')
      for (let i = 0; i < 3; i++) {
        const res = await app.inject('/health')
        expect(res.statusCode).toBe(200)
        expect(res.headers.ratelimit).toBeUndefined()
      }
      expect(store.consumes).toBe(0)
    })

    it('global: false limits only the routes that ask, with the plugin options as defaults', async () => {
      const store = countingStore()
      const app = await registered(fastify, {
        global: false,
        window: '1m',
        headers: 'legacy',
        prefix: 'api:',
        store,
      })
      app.get('/free', async () => 'free')
      app.get('/export', { config: { rateLimit: { limit: 1 } } }, async () => 'x')
      for (let i = 0; i < 3; i++) {
        const res = await app.inject('/free')
        expect(res.statusCode).toBe(200)
        expect(res.headers['x-ratelimit-limit']).toBeUndefined()
      }
      const res = await app.inject('/export')
      expect(res.headers['x-ratelimit-limit']).toBe('1')
      expect((await app.inject('/export')).statusCode).toBe(429)
      expect(store.consumes).toBe(2)
    })

    it('a route does not inherit the global name, nor a burst without its limit', async () => {
      const store = countingStore()
      const app = await registered(fastify, {
        limit: 10,
        window: '1m',
        algorithm: 'token-bucket',
        burst: 20,
        name: 'everything',
        store,
      })
      app.get('/a', { config: { rateLimit: { limit: 2 } } }, async () => 'a')
      app.get('/b', { config: { rateLimit: { window: '1h' } } }, async () => 'b')
      expect((await app.inject('/a')).headers['ratelimit-policy']).toBe('"tb2/1m";q=2;w=60')
      expect((await app.inject('/b')).headers['ratelimit-policy']).toBe('"tb10/1hb20";q=10;w=3600')
    })

    it('global: false with maxDelay or retryAfter: defaults for the routes that can use them', async () => {
      const app = await registered(fastify, { global: false, maxDelay: '1s', retryAfter: '3s' })
      app.get(
        '/paced',
        { config: { rateLimit: { algorithm: 'gcra', limit: 10, window: '1s', burst: 1 } } },
        async () => 'paced',
      )
      app.get(
        '/export',
        {
          config: { rateLimit: { algorithm: 'concurrency', limit: 1, window: '1m', maxDelay: 0 } },
        },
        async () => 'x',
      )
      const started = performance.now()
      const paced = await Promise.all([app.inject('/paced'), app.inject('/paced')])
      expect(paced.map((r) => r.statusCode)).toEqual([200, 200])
      // the second waited for its slot, 100 ms after the first
      expect(performance.now() - started).toBeGreaterThanOrEqual(95)
      expect((await app.inject('/export')).statusCode).toBe(200)
      for (const options of [{ maxDelay: '1s' }, { delayAfter: 2 }, { retryAfter: '2s' }]) {
        const probe = fastify()
        await expect(probe.register(rateLimit, { global: false, ...options })).resolves.toBe(probe)
        await probe.close()
      }
    })

    it("a plugin's retryAfter stays with concurrency routes", async () => {
      const app = await registered(fastify, {
        algorithm: 'concurrency',
        limit: 2,
        window: '1m',
        retryAfter: '3s',
      })
      // a rate policy of its own leaves the estimate behind; a concurrency one keeps it
      app.get('/rate', { config: { rateLimit: { algorithm: 'gcra', limit: 5 } } }, async () => 'r')
      app.get('/few', { config: { rateLimit: { limit: 1 } } }, async () => 'f')
      expect((await app.inject('/rate')).statusCode).toBe(200)
      expect((await app.inject('/few')).headers['ratelimit-policy']).toMatch(
        /;q=1;qu="concurrent-requests"$/,
      )
    })

    it('a route config of its own store or redis replaces the plugin store', async () => {
      const pluginStore = countingStore()
      const routeStore = countingStore()
      const app = await registered(fastify, { limit: 5, window: '1m', store: pluginStore })
      app.get('/own', { config: { rateLimit: { store: routeStore } } }, async () => 'own')
      await app.inject('/own')
      expect([pluginStore.consumes, routeStore.consumes]).toEqual([0, 1])
    })

    it('an invalid route config throws where the route is declared, naming option and route', async () => {
      const app = await registered(fastify, { limit: 5, window: '1m' })
      expect(() =>
        app.get('/x', { config: { rateLimit: { window: 'soon' } } }, async () => 'x'),
      ).toThrow(/^Invalid `window`: .* \(config\.rateLimit of route GET \/x\)$/)
      expect(() =>
        app.post(
          '/y',
          { config: { rateLimit: { hook: 'onSend' as 'onRequest' } } },
          async () => 'y',
        ),
      ).toThrow(/`hook`.*route POST \/y/)
      expect(() =>
        app.get('/z', { config: { rateLimit: 5 as unknown as false } }, async () => 'z'),
      ).toThrow(/`rateLimit`: expected an object/)
    })

    it('an invalid route config inside a plugin fails ready()', async () => {
      const app = await registered(fastify, { global: false })
      app.register(async (child) => {
        child.get('/x', { config: { rateLimit: { limit: 0, window: '1s' } } }, async () => 'x')
      })
      await expect(app.ready()).rejects.toThrow(/`limit`.*route GET \/x/)
    })

    it("the hook option runs a route's limiter after the body is parsed", async () => {
      const app = await registered(fastify, { global: false })
      app.post<{ Body: { email: string } }>(
        '/login',
        {
          config: {
            rateLimit: {
              limit: 1,
              window: '15m',
              hook: 'preHandler',
              key: (request) => `${(request.body as { email: string }).email}`,
            },
          },
        },
        async () => 'welcome',
      )
      const login = (email: string) =>
        app.inject({ method: 'POST', url: '/login', payload: { email } })
      expect((await login('a@example.com')).statusCode).toBe(200)
      expect((await login('a@example.com')).statusCode).toBe(429)
      expect((await login('b@example.com')).statusCode).toBe(200)
    })
  })

  describe('app.rateLimit()', () => {
    it('returns a preHandler that limits the route, next to the global limiter', async () => {
      const store = countingStore()
      const app = await registered(fastify, { limit: 100, window: '1m', store })
      app.get(
        '/x',
        { preHandler: app.rateLimit({ limit: 1, window: '10s' }) },
        async (request) => ({
          remaining: request.rateLimit?.remaining,
        }),
      )
      const ok = await app.inject('/x')
      expect(ok.statusCode).toBe(200)
      expect(ok.json()).toEqual({ remaining: 0 })
      expect(ok.headers.ratelimit).toMatch(/^"gc100\/1m";r=99;t=\d+, "gc1\/10s";r=0;/)
      expect((await app.inject('/x')).statusCode).toBe(429)
      expect(store.keys).toEqual(['127.0.0.1', 'GET /x#127.0.0.1', '127.0.0.1', 'GET /x#127.0.0.1'])
    })

    it('one hook on two routes counts each route apart; the same name shares', async () => {
      const app = await registered(fastify, { global: false })
      const perRoute = app.rateLimit({ limit: 1, window: '1m' })
      const shared = app.rateLimit({ limit: 1, window: '1m', name: 'shared' })
      const sharedToo = app.rateLimit({ limit: 1, window: '1m', name: 'shared' })
      app.get('/x', { preHandler: perRoute }, async () => 'x')
      app.get('/y', { preHandler: perRoute }, async () => 'y')
      app.get('/s1', { preHandler: shared }, async () => 's1')
      app.get('/s2', { preHandler: sharedToo }, async () => 's2')
      expect((await app.inject('/x')).statusCode).toBe(200)
      expect((await app.inject('/y')).statusCode).toBe(200)
      expect((await app.inject('/x')).statusCode).toBe(429)
      expect((await app.inject('/s1')).statusCode).toBe(200)
      expect((await app.inject('/s2')).statusCode).toBe(429)
    })

    it('invalid options throw where app.rateLimit is called', async () => {
      const app = await registered(fastify, { global: false })
      expect(() => app.rateLimit({ limit: 1, window: 'soon' })).toThrow(/`window`/)
      expect(() => app.rateLimit({ limit: 1, window: '1s', hook: 'onRequest' } as object)).toThrow(
        /^Invalid `hook`: is not an option/,
      )
    })

    it('on the not-found handler it counts 404s against the global budget', async () => {
      const app = await registered(fastify, { limit: 2, window: '1m' })
      app.setNotFoundHandler({ preHandler: app.rateLimit() }, async (_request, reply) =>
        reply.code(404).send('nope'),
      )
      app.get('/', async () => 'home')
      expect((await app.inject('/missing')).statusCode).toBe(404)
      expect((await app.inject('/')).statusCode).toBe(200)
      expect((await app.inject('/')).statusCode).toBe(429)
      expect((await app.inject('/missing')).statusCode).toBe(429)
    })
  })

  describe('route scopes', () => {
    it('per-route limiters and the global one never share counters, even with one store', async () => {
      const store = new MemoryStore()
      const app = await registered(fastify, { limit: 2, window: '1m', store })
      const same = { config: { rateLimit: { limit: 2, window: '1m' } } }
      app.get('/', async () => 'home')
      app.get('/a', same, async () => 'a')
      app.get('/b', same, async () => 'b')
      for (const url of ['/', '/', '/a', '/a', '/b', '/b']) {
        expect((await app.inject(url)).statusCode).toBe(200)
      }
      for (const url of ['/', '/a', '/b']) expect((await app.inject(url)).statusCode).toBe(429)
    })

    it('routes in plugins: the global limiter applies, per-route scopes carry the prefix', async () => {
      const store = countingStore()
      const app = await registered(fastify, { limit: 5, window: '1m', store })
      app.register(
        async (api) => {
          api.get('/users/:id', async () => 'u')
          api.get('/items/:id', { config: { rateLimit: { limit: 2 } } }, async () => 'i')
        },
        { prefix: '/api' },
      )
      await app.inject('/api/users/1')
      await app.inject('/api/items/1')
      await app.inject({ method: 'HEAD', url: '/api/items/2' })
      expect(store.keys).toEqual([
        '127.0.0.1',
        'GET /api/items/:id#127.0.0.1',
        'GET /api/items/:id#127.0.0.1',
      ])
      expect((await app.inject('/api/items/3')).statusCode).toBe(429)
    })
  })

  // Regression: the HEAD twin of a route declared for GET and POST had a scope of its own
  // (`GET /x`, not `GET,POST /x`): a second budget, the GET handler running twice as often
  describe('the HEAD twin of a route declared for several methods shares its counter', () => {
    it.each(['config.rateLimit', 'app.rateLimit()'])('with %s', async (how) => {
      const store = countingStore()
      const app = await registered(fastify, { global: false, limit: 3, window: '1m', store })
      const limit = { limit: 3, window: '1m' }
      app.route({
        method: ['GET', 'POST'],
        url: '/multi',
        ...(how === 'config.rateLimit'
          ? { config: { rateLimit: limit } }
          : { preHandler: app.rateLimit(limit) }),
        handler: async () => 'x',
      })
      const statuses: number[] = []
      for (const method of ['GET', 'POST', 'HEAD', 'HEAD'] as const)
        statuses.push((await app.inject({ method, url: '/multi' })).statusCode)
      expect(statuses).toEqual([200, 200, 200, 429])
      expect(new Set(store.keys)).toEqual(new Set(['GET,POST /multi#127.0.0.1']))
    })
  })

  // Regression: a second registration in a child scope failed with Fastify's bare
  // FST_ERR_DEC_ALREADY_PRESENT, naming neither the plugin nor the way to a scope's own limit
  it('a second registration in a child scope fails, saying what to do instead', async () => {
    const app = await registered(fastify, { limit: 5, window: '1m' })
    app.register(async (child) => {
      await child.register(rateLimit, { limit: 2, window: '1m' })
    })
    await expect(app.ready()).rejects.toThrow(/registered already.*scope\.rateLimit/)
  })

  it("what it says works: a child scope's named hook limits its routes together", async () => {
    const store = countingStore()
    const app = await registered(fastify, { limit: 5, window: '1m', store })
    await app.register(
      async (child) => {
        child.addHook('onRequest', child.rateLimit({ limit: 2, window: '1m', name: 'api' }))
        child.get('/a', async () => 'a')
        child.get('/b', async () => 'b')
      },
      { prefix: '/api' },
    )
    const statuses: number[] = []
    for (const url of ['/api/a', '/api/b', '/api/a'])
      statuses.push((await app.inject(url)).statusCode)
    expect(statuses).toEqual([200, 200, 429])
  })

  // Regression (found from outside): the declared methods were written on the route's config
  // object itself, so one object shared by GET and POST routes gave both the GET scope
  it('one config object shared by routes of other methods keeps their budgets apart', async () => {
    const store = countingStore()
    const app = await registered(fastify, { global: false, store })
    const config = { rateLimit: { limit: 2, window: '1m' } }
    app.get('/a', { config }, async () => 'a')
    app.post('/a', { config }, async () => 'a')
    const statuses: number[] = []
    for (const method of ['GET', 'GET', 'POST', 'POST', 'POST'] as const)
      statuses.push((await app.inject({ method, url: '/a' })).statusCode)
    expect(statuses).toEqual([200, 200, 200, 200, 429])
    expect(new Set(store.keys)).toEqual(new Set(['GET /a#127.0.0.1', 'POST /a#127.0.0.1']))
  })

  describe('client IP and trustProxy', () => {
    const ipApp = async (trustProxy: boolean) => {
      const app = fastify({ trustProxy })
      await app.register(rateLimit, { limit: 1, window: '1m' })
      app.get('/', async (request) => ipKey(request.ip))
      return app
    }
    const from = (xff: string) => ({ url: '/', headers: { 'x-forwarded-for': xff } })

    it('ignores a forged X-Forwarded-For unless trustProxy is set, and says so once', async () => {
      const warnings = await warningsDuring(async () => {
        const app = await ipApp(false)
        expect((await app.inject(from('198.51.100.1'))).body).toBe('127.0.0.1')
        expect((await app.inject(from('198.51.100.2'))).statusCode).toBe(429)
      })
      expect(warnings.map((w) => w.code)).toEqual(['LIMITER_FORWARDED_IGNORED'])
      expect(warnings[0]?.message).toContain('trustProxy')
    })

    it("uses Fastify's request.ip with trustProxy, grouping IPv6 by /56", async () => {
      const app = await ipApp(true)
      expect((await app.inject(from('198.51.100.1'))).statusCode).toBe(200)
      expect((await app.inject(from('198.51.100.2'))).statusCode).toBe(200)
      expect((await app.inject(from('2001:db8::1'))).body).toBe('2001:db8::/56')
      expect((await app.inject(from('2001:db8:0:0:ffff::9'))).statusCode).toBe(429)
    })
  })

  describe('refunds', () => {
    it.each<
      [string, { skipSuccessfulRequests?: boolean; skipFailedRequests?: boolean }, number, number]
    >([
      ['skipSuccessfulRequests refunds a 200', { skipSuccessfulRequests: true }, 200, 3],
      ['skipSuccessfulRequests keeps a 500', { skipSuccessfulRequests: true }, 500, 0],
      ['skipFailedRequests refunds a 404', { skipFailedRequests: true }, 404, 3],
      ['skipFailedRequests keeps a 302', { skipFailedRequests: true }, 302, 0],
    ])('%s, exactly once per request', async (_name, options, status, refunds) => {
      const store = countingStore()
      const app = await registered(fastify, { global: false })
      const handler = async (_request: unknown, reply: { code(n: number): unknown }) => {
        reply.code(status)
        return 'done'
      }
      app.get(
        '/config',
        { config: { rateLimit: { limit: 2, window: '1m', store, ...options } } },
        handler,
      )
      app.get(
        '/hook',
        { preHandler: app.rateLimit({ limit: 2, window: '1m', store, ...options }) },
        handler,
      )
      for (const url of ['/config', '/hook']) {
        for (let i = 0; i < 3; i++) {
          const res = await app.inject(url)
          expect(res.statusCode).toBe(refunds > 0 || i < 2 ? status : 429)
        }
      }
      await tick()
      expect(store.refunds).toBe(refunds * 2)
    })
  })
})
