// rateLimit() with the embedded MemoryStore, through supertest, on Koa 2 and 3: headers, limited
// responses and options.
import { MemoryStore, QUOTA_EXCEEDED_TYPE, type Store } from '@limiter/core'
import request from 'supertest'
import { describe, expect, it } from 'vitest'
import { type RateLimitOptions, rateLimit } from '../src/index.js'
import { countingStore, KOA, appWith as makeApp, showErrors } from './helpers.js'

describe.each(KOA)('$version', ({ Koa }) => {
  const appWith = (options: RateLimitOptions) => makeApp(Koa, options).callback()

  describe('headers', () => {
    it('sends draft-10 RateLimit-Policy and RateLimit by default', async () => {
      const res = await request(appWith({ limit: 3, window: '1m' })).get('/')
      expect(res.status).toBe(200)
      expect(res.headers['ratelimit-policy']).toBe('"sw3.60000";q=3;w=60')
      expect(res.headers.ratelimit).toMatch(/^"sw3\.60000";r=2;t=\d+$/)
      expect(res.headers['retry-after']).toBeUndefined()
    })

    it.each<[string, RateLimitOptions['headers'], Record<string, RegExp | undefined>]>([
      [
        'draft-7',
        'draft-7',
        { 'ratelimit-policy': /^3;w=60$/, ratelimit: /^limit=3, remaining=2, reset=\d+$/ },
      ],
      [
        'draft-6',
        'draft-6',
        {
          'ratelimit-policy': /^3;w=60$/,
          'ratelimit-limit': /^3$/,
          'ratelimit-remaining': /^2$/,
          'ratelimit-reset': /^\d+$/,
          ratelimit: undefined,
        },
      ],
      [
        'legacy',
        'legacy',
        {
          'x-ratelimit-limit': /^3$/,
          'x-ratelimit-remaining': /^2$/,
          'x-ratelimit-reset': /^\d{10}$/,
          ratelimit: undefined,
        },
      ],
      [
        'draft-10 + legacy',
        ['draft-10', 'legacy'],
        { ratelimit: /^"sw3\.60000";r=2;t=\d+$/, 'x-ratelimit-remaining': /^2$/ },
      ],
      [
        'false',
        false,
        { ratelimit: undefined, 'ratelimit-policy': undefined, 'x-ratelimit-limit': undefined },
      ],
    ])('headers: %s', async (_name, headers, expected) => {
      const res = await request(appWith({ limit: 3, window: '1m', headers })).get('/')
      for (const [name, pattern] of Object.entries(expected)) {
        if (pattern === undefined) expect(res.headers[name]).toBeUndefined()
        else expect(res.headers[name]).toMatch(pattern)
      }
    })

    it('legacy reset is epoch seconds, not before Retry-After', async () => {
      const app = appWith({ limit: 1, window: '1m', headers: 'legacy' })
      await request(app).get('/')
      const res = await request(app).get('/')
      const reset = Number(res.headers['x-ratelimit-reset'])
      expect(reset).toBeGreaterThanOrEqual(
        Math.floor(Date.now() / 1000) + Number(res.headers['retry-after']),
      )
    })

    it('several limiters on one request append one list member each', async () => {
      const app = new Koa()
      app.use(rateLimit({ limit: 10, window: '1m' }))
      app.use(rateLimit({ limit: 2, window: '1s', name: 'burst' }))
      app.use((ctx) => {
        ctx.body = 'a'
      })
      const res = await request(app.callback()).get('/')
      expect(res.headers['ratelimit-policy']).toBe('"sw10.60000";q=10;w=60, "burst";q=2;w=1')
      expect(res.headers.ratelimit).toMatch(/^"sw10\.60000";r=9;t=\d+, "burst";r=1;t=\d+$/)
    })
  })

  describe('limited response', () => {
    it('answers 429 with Retry-After and an RFC 9457 quota-exceeded problem', async () => {
      const app = appWith({ limit: 1, window: '1m' })
      await request(app).get('/')
      const res = await request(app).get('/')
      expect(res.status).toBe(429)
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
      const retryAfter = Number(res.headers['retry-after'])
      expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true)
      expect(res.headers.ratelimit).toBe(`"sw1.60000";r=0;t=${retryAfter}`)
      const body = JSON.parse(res.text)
      expect(body).toMatchObject({
        type: QUOTA_EXCEEDED_TYPE,
        status: 429,
        'violated-policies': ['sw1.60000'],
      })
      expect(body.title).toEqual(expect.any(String))
      expect(body.detail).toMatch(/^The limit is 1 request per 1 minute\. Retry in \d+ seconds?\.$/)
    })

    it('a limited request never reaches the handlers after the limiter', async () => {
      let reached = 0
      const app = new Koa()
      app.use(rateLimit({ limit: 1, window: '1m' }))
      app.use((ctx) => {
        reached++
        ctx.body = 'ok'
      })
      await request(app.callback()).get('/')
      expect((await request(app.callback()).get('/')).status).toBe(429)
      expect(reached).toBe(1)
    })

    it.each<[string, Partial<RateLimitOptions>, number, RegExp, string]>([
      ['string', { message: 'Slow down' }, 429, /^text\/plain/, 'Slow down'],
      [
        'object',
        { message: { error: 'slow down' } },
        429,
        /^application\/json/,
        '{"error":"slow down"}',
      ],
      [
        'callback',
        { message: (ctx) => ({ path: ctx.path }) },
        429,
        /^application\/json/,
        '{"path":"/"}',
      ],
      ['async callback', { message: async () => 'later' }, 429, /^text\/plain/, 'later'],
      ['statusCode', { statusCode: 503, message: 'busy' }, 503, /^text\/plain/, 'busy'],
    ])('message: %s', async (_name, options, status, contentType, text) => {
      const app = appWith({ limit: 1, window: '1m', ...options })
      await request(app).get('/')
      const res = await request(app).get('/')
      expect(res.status).toBe(status)
      expect(res.headers['content-type']).toMatch(contentType)
      expect(res.text).toBe(text)
      expect(res.headers['retry-after']).toMatch(/^\d+$/)
    })

    it('onLimited(ctx, decision) takes over the response, with the headers already set', async () => {
      const app = appWith({
        limit: 1,
        window: '1m',
        onLimited: (ctx, decision) => {
          ctx.status = 418
          ctx.body = {
            retryAfterMs: decision.retryAfterMs,
            retryAfter: ctx.response.get('Retry-After'),
          }
        },
      })
      await request(app).get('/')
      const res = await request(app).get('/')
      expect(res.status).toBe(418)
      expect(res.body.retryAfterMs).toBeGreaterThan(0)
      expect(res.body.retryAfter).toBe(res.headers['retry-after'])
      expect(res.headers.ratelimit).toMatch(/r=0/)
    })

    it('an async onLimited is awaited; one that throws goes to the error path', async () => {
      const slow = appWith({
        limit: 1,
        window: '1m',
        onLimited: async (ctx) => {
          await new Promise((r) => setTimeout(r, 10))
          ctx.body = 'waited'
        },
      })
      await request(slow).get('/')
      const waited = await request(slow).get('/')
      // The status defaults to statusCode when the handler sets none.
      expect([waited.status, waited.text]).toEqual([429, 'waited'])

      const broken = appWith({
        limit: 1,
        window: '1m',
        onLimited: () => {
          throw new Error('custom handler broke')
        },
      })
      await request(broken).get('/')
      const res = await request(broken).get('/')
      expect(res.status).toBe(500)
      expect(res.body.message).toBe('custom handler broke')
    })

    it("a store failure with failureMode 'closed' answers 503, not 429", async () => {
      const down: Store = {
        consume: () => Promise.reject(new Error('connection refused')),
        refund: () => Promise.resolve(),
        reset: () => Promise.resolve(),
      }
      const app = appWith({
        limit: 5,
        window: '1m',
        store: down,
        failureMode: 'closed',
        onError: () => {},
      })
      const res = await request(app).get('/')
      expect(res.status).toBe(503)
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
      expect(res.headers['retry-after']).toMatch(/^\d+$/)
    })
  })

  describe('options', () => {
    it('skip lets requests through uncounted and without headers', async () => {
      const store = countingStore()
      const app = appWith({
        limit: 1,
        window: '1m',
        store,
        skip: (ctx) => ctx.get('x-internal') === 'yes',
      })
      for (let i = 0; i < 3; i++) {
        const res = await request(app).get('/').set('x-internal', 'yes')
        expect(res.status).toBe(200)
        expect(res.headers.ratelimit).toBeUndefined()
        expect(res.body.rateLimit).toBeUndefined()
      }
      expect(store.consumes).toBe(0)
      expect((await request(app).get('/')).status).toBe(200)
    })

    it('cost callback charges each request its cost', async () => {
      const app = appWith({ limit: 10, window: '1m', cost: (ctx) => Number(ctx.query.cost ?? 1) })
      expect((await request(app).get('/?cost=4')).headers.ratelimit).toMatch(/;r=6;/)
      expect((await request(app).get('/?cost=6')).headers.ratelimit).toMatch(/;r=0;/)
      expect((await request(app).get('/?cost=1')).status).toBe(429)
    })

    it('a key callback sees the context and counts per key', async () => {
      const app = appWith({ limit: 1, window: '1m', key: (ctx) => `user:${ctx.get('x-user')}` })
      expect((await request(app).get('/').set('x-user', 'a')).status).toBe(200)
      expect((await request(app).get('/').set('x-user', 'b')).status).toBe(200)
      expect((await request(app).get('/').set('x-user', 'a')).status).toBe(429)
    })

    it.each<[string, RateLimitOptions['key'], RegExp]>([
      [
        'throws',
        () => {
          throw new Error('no session')
        },
        /^rateLimit option `key` threw: no session$/,
      ],
      [
        'rejects',
        async () => {
          throw new Error('lookup failed')
        },
        /^rateLimit option `key` threw: lookup failed$/,
      ],
      ['returns an empty string', () => '', /^rateLimit option `key` returned an empty string/],
      [
        'returns undefined',
        () => undefined as unknown as string,
        /^rateLimit option `key` returned undefined/,
      ],
      [
        'returns a number',
        () => 42 as unknown as string,
        /^rateLimit option `key` returned number 42/,
      ],
    ])('a key callback that %s is thrown to Koa, naming `key`', async (_name, key, message) => {
      const res = await request(appWith({ limit: 5, window: '1m', key })).get('/')
      expect(res.status).toBe(500)
      expect(res.body.message).toMatch(message)
      expect(res.body.code).toBe('ERR_LIMITER_KEY')
    })

    it.each<[string, Partial<RateLimitOptions>, RegExp]>([
      ['cost', { cost: () => 99 }, /^rateLimit option `cost` returned number 99/],
      [
        'skip',
        {
          skip: () => {
            throw new Error('flag service down')
          },
        },
        /^rateLimit option `skip` threw: flag service down/,
      ],
      [
        'message',
        { limit: 1, message: () => undefined as unknown as string },
        /^rateLimit option `message` returned undefined/,
      ],
    ])('a %s callback misbehaving is thrown to Koa, naming it', async (_name, options, message) => {
      const app = appWith({ limit: 5, window: '1m', ...options })
      let res = await request(app).get('/')
      if (options.limit === 1) res = await request(app).get('/')
      expect(res.status).toBe(500)
      expect(res.body.message).toMatch(message)
    })

    it("reaches Koa's own error handling: a 500 and the app's 'error' event", async () => {
      const app = new Koa()
      const errors: Error[] = []
      app.on('error', (error: Error) => errors.push(error))
      app.use(
        rateLimit({
          limit: 5,
          window: '1m',
          key: () => {
            throw new Error('no session')
          },
        }),
      )
      app.use((ctx) => {
        ctx.body = 'unreachable'
      })
      const res = await request(app.callback()).get('/')
      expect(res.status).toBe(500)
      expect(res.text).toBe('Internal Server Error')
      expect(errors.map((e) => e.message)).toEqual(['rateLimit option `key` threw: no session'])
    })

    it.each<[string, Record<string, unknown>, RegExp]>([
      ['limit', { limit: -1, window: '1m' }, /`limit`/],
      ['window', { limit: 1, window: 'soon' }, /`window`/],
      [
        'redis',
        { limit: 1, window: '1m', store: new MemoryStore(), redis: { evalsha() {}, eval() {} } },
        /`redis`/,
      ],
      ['headers', { limit: 1, window: '1m', headers: 'draft-8' }, /`headers`/],
      ['key', { limit: 1, window: '1m', key: 'ip' }, /`key`/],
      ['onLimited', { limit: 1, window: '1m', onLimited: 429 }, /`onLimited`/],
      ['max', { max: 5, windowMs: 1000 }, /`max`.*did you mean `limit`/],
      ['statusCode', { limit: 1, window: '1m', statusCode: 200 }, /`statusCode`/],
      ['cost', { limit: 2, window: '1m', cost: 3 }, /`cost`/],
      ['failureMode', { limit: 1, window: '1m', failureMode: 'maybe' }, /`failureMode`/],
    ])('invalid option %s throws synchronously, naming it', (option, options, message) => {
      let error: (Error & { option?: string }) | undefined
      try {
        rateLimit(options as unknown as RateLimitOptions)
      } catch (e) {
        error = e as Error & { option?: string }
      }
      expect(error?.message).toMatch(message)
      expect(error?.option).toBe(option)
      expect(error instanceof TypeError || error instanceof RangeError).toBe(true)
    })

    it('ctx.state.rateLimit carries the decision to later middleware', async () => {
      const res = await request(appWith({ limit: 5, window: '1m' })).get('/')
      expect(res.body.rateLimit).toMatchObject({
        allowed: true,
        limit: 5,
        remaining: 4,
        retryAfterMs: 0,
      })
    })

    it('ctx.state.rateLimit holds the last limiter passed, also on a limited response', async () => {
      const app = new Koa()
      app.use(showErrors)
      app.use(rateLimit({ limit: 10, window: '1m' }))
      app.use(
        rateLimit({
          limit: 1,
          window: '1m',
          name: 'tight',
          onLimited: (ctx) => {
            ctx.status = 429
            ctx.body = { rateLimit: ctx.state.rateLimit }
          },
        }),
      )
      app.use((ctx) => {
        ctx.body = { rateLimit: ctx.state.rateLimit }
      })
      expect((await request(app.callback()).get('/')).body.rateLimit).toMatchObject({
        limit: 1,
        remaining: 0,
      })
      expect((await request(app.callback()).get('/')).body.rateLimit).toMatchObject({
        allowed: false,
        limit: 1,
      })
    })
  })
})
