// What is Hono's own: route scopes from hono/route, c.get('rateLimit'), c.res replaced after the
// handler (immutable headers, merged limiters, headers set before a refusal), the client address
// from the binding or a getConnInfo helper, errors to onError, waitUntil, streamed bodies.
import { createServer, get as httpGet } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type Context, Hono } from 'hono'
import { cors } from 'hono/cors'
import { stream } from 'hono/streaming'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { countingStore, warningsDuring } from '../../../test-support/adapter-helpers.js'
import { type Decision, MemoryStore, type RateLimitVariables, rateLimit } from '../src/index.js'
import { get, listen, showErrors } from './helpers.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('route scopes', () => {
  it('a route limiter keys by the pattern: every URL of the route shares one budget', async () => {
    const store = countingStore(new MemoryStore())
    const app = new Hono()
    app.get('/users/:id', rateLimit({ limit: 2, window: '1m', store }), (c) => c.text('u'))
    const { url } = await listen(app)
    expect((await get(`${url}/users/1`)).status).toBe(200)
    const second = await get(`${url}/users/2`)
    // the header names the policy as given; the route scope is in the counter's key only
    expect(second.headers.ratelimit).toMatch(/^"gc2\/1m";r=0;/)
    expect((await get(`${url}/users/3`)).status).toBe(429)
    expect(new Set(store.keys)).toEqual(new Set(['/users/:id#127.0.0.1']))
  })

  it('a limiter on several methods is one budget: a client cannot switch methods for more', async () => {
    const app = new Hono()
    app.on(['GET', 'POST', 'PUT'], '/x', rateLimit({ limit: 2, window: '1m' }), (c) => c.text('x'))
    const { url } = await listen(app)
    const send = (method: string) => fetch(`${url}/x`, { method }).then((r) => r.status)
    expect([await send('GET'), await send('POST'), await send('PUT'), await send('GET')]).toEqual([
      200, 200, 429, 429,
    ])
  })

  it("app.use('/api/*') is scoped to /api, app.use() to nothing", async () => {
    const api = countingStore(new MemoryStore())
    const all = countingStore(new MemoryStore())
    const app = new Hono()
    app.use('/api/*', rateLimit({ limit: 3, window: '1m', store: api }))
    app.use(rateLimit({ limit: 3, window: '1m', name: 'all', store: all }))
    app.get('/api/a', (c) => c.text('a'))
    const { url } = await listen(app)
    const res = await get(`${url}/api/a`)
    // outer first, as on Node: the /api limiter was registered first
    expect(res.headers.ratelimit).toBe('"gc3/1m";r=2;t=20, "all";r=2;t=20')
    expect(api.keys).toEqual(['/api#127.0.0.1'])
    expect(all.keys).toEqual(['127.0.0.1'])
  })

  it('limiters in a sub-app keep the mounted pattern', async () => {
    const store = countingStore(new MemoryStore())
    const api = new Hono()
    api.get('/items/:id', rateLimit({ limit: 1, window: '1m', store }), (c) => c.text('i'))
    const app = new Hono().route('/v1', api)
    const { url } = await listen(app)
    const res = await get(`${url}/v1/items/7`)
    expect(res.headers['ratelimit-policy']).toBe('"gc1/1m";q=1;w=60')
    expect((await get(`${url}/v1/items/8`)).status).toBe(429)
    expect(store.keys).toEqual(['/v1/items/:id#127.0.0.1', '/v1/items/:id#127.0.0.1'])
  })
})

describe('the response', () => {
  it("c.get('rateLimit') holds the decision, typed", async () => {
    const app = new Hono()
    app.use(rateLimit({ limit: 5, window: '1m' }))
    app.get('/', (c) => {
      const decision = c.get('rateLimit')
      expectTypeOf(decision).toEqualTypeOf<Decision | undefined>()
      return c.json({ remaining: decision?.remaining })
    })
    const { url } = await listen(app)
    expect(JSON.parse((await get(url)).body)).toEqual({ remaining: 4 })
    const typed = new Hono<{ Variables: { user: string } & RateLimitVariables }>()
    typed.get('/', (c) => c.text(String(c.get('rateLimit')?.limit) + c.get('user')))
  })

  it('decorates a response proxied from fetch() and a Response.redirect() (immutable headers)', async () => {
    // the upstream has a limiter of its own: its member stays, ours goes first (ours is outside it)
    const upstream = createServer((_req, res) => {
      res.setHeader('ratelimit', '"upstream";r=7;t=1')
      res.end('from upstream')
    })
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r))
    const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`
    try {
      const app = new Hono()
      app.use(rateLimit({ limit: 5, window: '1m' }))
      app.get('/proxy', () => fetch(upstreamUrl))
      app.get('/redirect', () => Response.redirect(`${upstreamUrl}/x`, 302))
      const { url } = await listen(app)
      const proxied = await get(`${url}/proxy`)
      expect(proxied.status).toBe(200)
      expect(proxied.body).toBe('from upstream')
      expect(proxied.headers.ratelimit).toBe('"gc5/1m";r=4;t=12, "upstream";r=7;t=1')
      const redirected = await fetch(`${url}/redirect`, { redirect: 'manual' })
      expect(redirected.status).toBe(302)
      expect(redirected.headers.get('location')).toBe(`${upstreamUrl}/x`)
      expect(redirected.headers.get('ratelimit')).toMatch(/r=3/)
    } finally {
      upstream.close()
    }
  })

  it('a limiter whose response is a copy keeps the members the inner limiters merged', async () => {
    const app = new Hono()
    // a concurrency limiter answers a copy of the response (its body ends the lease)
    app.use(rateLimit({ algorithm: 'concurrency', limit: 5, window: '1m', name: 'inflight' }))
    app.get('/', rateLimit({ limit: 3, window: '1m' }), (c) => c.text('ok'))
    const { url } = await listen(app)
    const res = await get(url)
    expect(res.status).toBe(200)
    expect(res.headers.ratelimit).toBe('"inflight";r=4, "gc3/1m";r=2;t=20')
  })

  it('nested limiters: the outer one first in every list field, on a pass and a refusal', async () => {
    const app = new Hono()
    app.use(rateLimit({ limit: 10, window: '1m', name: 'global' }))
    app.get('/', rateLimit({ limit: 1, window: '1m', name: 'route' }), (c) => c.text('ok'))
    const { url } = await listen(app)
    const passed = await get(url)
    expect(passed.status).toBe(200)
    // the order Node's adapters give: the global limiter writes first there
    expect(passed.headers['ratelimit-policy']).toBe('"global";q=10;w=60, "route";q=1;w=60')
    expect(passed.headers.ratelimit).toBe('"global";r=9;t=6, "route";r=0;t=60')
    const refused = await get(url)
    expect(refused.status).toBe(429)
    expect(refused.headers['ratelimit-policy']).toBe('"global";q=10;w=60, "route";q=1;w=60')
    expect(refused.headers.ratelimit).toMatch(/^"global";r=8;t=\d+, "route";r=0;t=\d+$/)
  })

  it("our fields reach a handler's own Response and the error handler's, and replace a handler's", async () => {
    const app = new Hono()
    app.use(rateLimit({ limit: 10, window: '1m' }))
    app.get('/own', () => new Response('own'))
    app.get('/mine', (c) => {
      c.header('RateLimit', 'mine')
      return c.text('x')
    })
    app.get('/fail', () => {
      throw new Error('failed')
    })
    app.onError((_error, c) => c.text('failed', 500))
    const { url } = await listen(app)
    const own = await get(`${url}/own`)
    expect([own.body, own.headers.ratelimit]).toEqual(['own', '"gc10/1m";r=9;t=6'])
    const mine = await get(`${url}/mine`)
    expect(mine.headers.ratelimit).toMatch(/^"gc10\/1m";r=8;t=\d+$/)
    // as on Node's adapters, whose fields are set before the handler runs
    const failed = await get(`${url}/fail`)
    expect(failed.status).toBe(500)
    expect(failed.headers.ratelimit).toMatch(/^"gc10\/1m";r=7;t=\d+$/)
    expect(failed.headers['ratelimit-policy']).toBe('"gc10/1m";q=10;w=60')
  })

  it('three nested limiters: outer first, on a pass and a refusal', async () => {
    const app = new Hono()
    app.use(rateLimit({ limit: 10, window: '1m', name: 'a' }))
    app.use(rateLimit({ limit: 5, window: '1m', name: 'b', key: () => 'k' }))
    app.get('/', rateLimit({ limit: 1, window: '1m', name: 'c' }), (c) => c.text('ok'))
    const { url } = await listen(app)
    const passed = await get(url)
    expect(passed.headers['ratelimit-policy']).toBe('"a";q=10;w=60, "b";q=5;w=60, "c";q=1;w=60')
    expect(passed.headers.ratelimit).toMatch(/^"a";r=9;t=\d+, "b";r=4;t=\d+, "c";r=0;t=60$/)
    const refused = await get(url)
    expect(refused.status).toBe(429)
    expect(refused.headers['ratelimit-policy']).toBe('"a";q=10;w=60, "b";q=5;w=60, "c";q=1;w=60')
  })

  it('a refusal keeps the headers earlier middleware set (CORS)', async () => {
    const app = new Hono()
    app.use(cors({ origin: 'https://example.com' }))
    app.use(rateLimit({ limit: 1, window: '1m' }))
    app.get('/', (c) => c.text('ok'))
    const { url } = await listen(app)
    const headers = { origin: 'https://example.com' }
    expect((await get(url, headers)).headers['access-control-allow-origin']).toBe(
      'https://example.com',
    )
    const refused = await get(url, headers)
    expect(refused.status).toBe(429)
    expect(refused.headers['access-control-allow-origin']).toBe('https://example.com')
    expect(refused.headers['content-type']).toBe('application/problem+json')
  })

  it('a refusal keeps fields set with c.header() before it, by middleware or by a wrapper', async () => {
    const app = new Hono()
    app.use('/mw', async (c, next) => {
      c.header('X-Trace', 'mw')
      await next()
    })
    app.use('/mw', rateLimit({ limit: 1, window: '1m' }))
    // the limiter called by a function registered first: Hono's first handler, but not ours
    const wrapped = rateLimit({ limit: 1, window: '1m' })
    app.use('/wrapped', (c, next) => {
      c.header('X-Trace', 'wrapped')
      return wrapped(c, next)
    })
    app.get('*', (c) => c.text('ok'))
    const { url } = await listen(app)
    for (const path of ['mw', 'wrapped']) {
      await get(`${url}/${path}`)
      const refused = await get(`${url}/${path}`)
      expect([refused.status, refused.headers['x-trace']]).toEqual([429, path])
      expect(refused.headers['retry-after']).toMatch(/^\d+$/)
    }
  })

  it('a limiter that runs first sends the fields as one after other middleware does', async () => {
    const app = new Hono()
    app.use('/first', rateLimit({ limit: 1, window: '1m', headers: ['draft-7', 'legacy'] }))
    app.use('/after', (_c, next) => next())
    app.use('/after', rateLimit({ limit: 1, window: '1m', headers: ['draft-7', 'legacy'] }))
    app.get('*', (c) => c.text('ok'))
    const { url } = await listen(app)
    const refusal = async (path: string) => {
      await get(`${url}/${path}`)
      return new Promise<{ status: number; names: string[]; body: string }>((resolve) => {
        httpGet(`${url}/${path}`, (res) => {
          let body = ''
          res.on('data', (chunk) => (body += chunk))
          res.on('end', () => {
            const names = res.rawHeaders.filter((_, i) => i % 2 === 0)
            resolve({ status: res.statusCode ?? 0, names, body })
          })
        })
      })
    }
    const first = await refusal('first')
    const after = await refusal('after')
    expect(first.status).toBe(429)
    // lower-case names in a Headers' order, then Node's own fields (Content-Length may move)
    const ours = (r: { names: string[] }) => r.names.filter((n) => n === n.toLowerCase())
    expect(ours(first)).toEqual(ours(after))
    expect(ours(first)).toEqual([
      'content-type',
      'ratelimit',
      'ratelimit-policy',
      'retry-after',
      'x-ratelimit-limit',
      'x-ratelimit-remaining',
      'x-ratelimit-reset',
    ])
    const problem = (r: { body: string }) => JSON.parse(r.body) as Record<string, unknown>
    expect(Object.keys(problem(first))).toEqual(Object.keys(problem(after)))
    expect(problem(first).status).toBe(429)
  })

  it('onLimited returns the Response; the headers are added to it', async () => {
    const app = new Hono()
    app.use(
      rateLimit({
        limit: 1,
        window: '1m',
        onLimited: (c, decision) => c.json({ later: decision.retryAfterMs > 0 }, 429),
      }),
    )
    app.get('/', (c) => c.text('ok'))
    const { url } = await listen(app)
    await get(url)
    const res = await get(url)
    expect(res.status).toBe(429)
    expect(JSON.parse(res.body)).toEqual({ later: true })
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0)
  })
})

describe('the client address', () => {
  it('comes from a getConnInfo helper when given', async () => {
    const app = new Hono()
    const seen: string[] = []
    app.use(
      rateLimit({
        limit: 1,
        window: '1m',
        getConnInfo: (c) => ({ remote: { address: c.req.header('x-test-client') } }),
      }),
    )
    app.get('/', (c) => {
      seen.push('ran')
      return c.text('ok')
    })
    const { url } = await listen(app)
    expect((await get(url, { 'x-test-client': '198.51.100.1' })).status).toBe(200)
    expect((await get(url, { 'x-test-client': '198.51.100.2' })).status).toBe(200)
    expect((await get(url, { 'x-test-client': '198.51.100.1' })).status).toBe(429)
    expect(seen).toHaveLength(2)
  })

  it('X-Forwarded-For counts under trustProxy only; the warning names the option', async () => {
    const xff = (ip: string) => ({ 'x-forwarded-for': ip })
    const trusting = new Hono()
    trusting.use(rateLimit({ limit: 1, window: '1m', trustProxy: 1 }))
    trusting.get('/', (c) => c.text('ok'))
    const behind = await listen(trusting)
    expect((await get(behind.url, xff('198.51.100.1'))).status).toBe(200)
    expect((await get(behind.url, xff('198.51.100.2'))).status).toBe(200)
    expect((await get(behind.url, xff('198.51.100.1'))).status).toBe(429)
    const plain = new Hono()
    plain.use(rateLimit({ limit: 1, window: '1m' }))
    plain.get('/', (c) => c.text('ok'))
    const direct = await listen(plain)
    const warnings = await warningsDuring(async () => {
      expect((await get(direct.url, xff('198.51.100.1'))).status).toBe(200)
      expect((await get(direct.url, xff('198.51.100.2'))).status).toBe(429)
    })
    expect(warnings.map((w) => w.code)).toEqual(['LIMITER_FORWARDED_IGNORED'])
    expect(warnings[0]?.message).toMatch(/limiter's own `trustProxy`/)
  })

  it('without a binding (app.request) the request fails to onError, saying what to pass', async () => {
    const app = showErrors(new Hono())
    app.use(rateLimit({ limit: 1, window: '1m' }))
    app.get('/', (c) => c.text('ok'))
    const res = await app.request('/')
    expect(res.status).toBe(500)
    const body = (await res.json()) as { code: string; message: string }
    expect(body.code).toBe('ERR_LIMITER_KEY')
    expect(body.message).toMatch(/getConnInfo/)
  })

  it('a bad getConnInfo throws at construction, naming it', () => {
    expect(() =>
      rateLimit({ limit: 1, window: '1m', getConnInfo: 'yes' as unknown as () => never }),
    ).toThrow(expect.objectContaining({ name: 'LimiterTypeError', option: 'getConnInfo' }))
  })
})

describe('the end of a request', () => {
  it('hands releases to executionCtx.waitUntil where the runtime has one', async () => {
    const app = new Hono()
    app.use(rateLimit({ algorithm: 'concurrency', limit: 1, window: '1m', key: () => 'k' }))
    app.get('/', (c) => c.text('ok'))
    const waited: Promise<unknown>[] = []
    const ctx = {
      waitUntil: (p: Promise<unknown>) => void waited.push(p),
      passThroughOnException: () => {},
      props: {},
    }
    const first = await app.fetch(new Request('http://app.test/'), {}, ctx)
    expect(await first.text()).toBe('ok')
    expect(waited).toHaveLength(1)
    await Promise.all(waited)
    expect((await app.fetch(new Request('http://app.test/'), {}, ctx)).status).toBe(200)
  })

  it('a HEAD request (served by the GET route, its body dropped) gives its lease back', async () => {
    const app = new Hono()
    app.use(rateLimit({ algorithm: 'concurrency', limit: 1, window: '1m' }))
    app.get('/', (c) => c.text('ok'))
    const { url } = await listen(app)
    for (let i = 0; i < 3; i++) {
      const head = await fetch(url, { method: 'HEAD' })
      expect(head.status).toBe(200)
      expect(head.headers.get('ratelimit')).toBe('"cc1/1m";r=0')
    }
    await sleep(20)
    expect((await get(url)).status).toBe(200)
  })

  it('a middleware further out that throws after next: its onError answer ends the lease', async () => {
    const app = new Hono()
    app.use(async (c, next) => {
      await next()
      if (c.req.query('fail') !== undefined) throw new Error('after the handler')
    })
    app.use(rateLimit({ algorithm: 'concurrency', limit: 1, window: '10m' }))
    app.get('/', (c) => c.text('ok'))
    app.onError((_error, c) => c.text('failed', 500))
    const { url } = await listen(app)
    // Hono's error path replaces the response, dropping our body unread (before: the lease
    // stayed held for the whole window, every later request refused)
    expect((await get(`${url}/?fail`)).status).toBe(500)
    const statuses: number[] = []
    for (let i = 0; i < 3; i++) {
      await sleep(20)
      statuses.push((await get(url)).status)
    }
    expect(statuses).toEqual([200, 200, 200])
  })

  it('a streamed response holds its concurrency lease until the stream ends', async () => {
    const app = new Hono()
    app.use(rateLimit({ algorithm: 'concurrency', limit: 1, window: '1m' }))
    app.get('/', (c) => c.text('ok'))
    app.get('/stream', (c: Context) =>
      stream(c, async (s) => {
        for (let i = 0; i < 4; i++) {
          await s.write(`${i}`)
          await sleep(60)
        }
      }),
    )
    const { url } = await listen(app)
    const streaming = await fetch(`${url}/stream`)
    expect(streaming.status).toBe(200)
    // the handler has returned its response; the body is still being written
    expect((await get(url)).status).toBe(429)
    expect(await streaming.text()).toBe('0123')
    await sleep(20)
    expect((await get(url)).status).toBe(200)
  })
})
