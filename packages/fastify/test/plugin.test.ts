// The plugin with the embedded MemoryStore, through fastify.inject, on Fastify 4 and 5: headers,
// limited responses, options, and option errors at register.
import { MemoryStore, QUOTA_EXCEEDED_TYPE } from '@limiter/core'
import type { FastifyRequest } from 'fastify'
import { describe, expect, it } from 'vitest'
import { type RateLimitOptions, type RateLimitPluginOptions, rateLimit } from '../src/index.js'
import { countingStore, FASTIFY, appWith as makeApp } from './helpers.js'

describe.each(FASTIFY)('$version', ({ fastify }) => {
  const appWith = (options: RateLimitPluginOptions) => makeApp(fastify, options)

  describe('headers', () => {
    it('sends draft-10 RateLimit-Policy and RateLimit by default', async () => {
      const res = await (await appWith({ limit: 3, window: '1m' })).inject('/')
      expect(res.statusCode).toBe(200)
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
      const res = await (await appWith({ limit: 3, window: '1m', headers })).inject('/')
      for (const [name, pattern] of Object.entries(expected)) {
        if (pattern === undefined) expect(res.headers[name]).toBeUndefined()
        else expect(res.headers[name]).toMatch(pattern)
      }
    })

    it('legacy reset is epoch seconds, not before Retry-After', async () => {
      const app = await appWith({ limit: 1, window: '1m', headers: 'legacy' })
      await app.inject('/')
      const res = await app.inject('/')
      expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(
        Math.floor(Date.now() / 1000) + Number(res.headers['retry-after']),
      )
    })

    it('several limiters on one route append one list member each', async () => {
      const app = await appWith({ limit: 10, window: '1m' })
      app.get(
        '/a',
        { preHandler: app.rateLimit({ limit: 2, window: '1s', name: 'burst' }) },
        async () => 'a',
      )
      const res = await app.inject('/a')
      expect(res.headers['ratelimit-policy']).toBe('"sw10.60000";q=10;w=60, "burst";q=2;w=1')
      expect(res.headers.ratelimit).toMatch(/^"sw10\.60000";r=9;t=\d+, "burst";r=1;t=\d+$/)
    })

    it('single-valued header sets keep the limiter with the fewest remaining', async () => {
      const app = await appWith({ limit: 10, window: '1m', headers: 'legacy' })
      app.get('/a', { preHandler: app.rateLimit({ limit: 2, window: '1m' }) }, async () => 'a')
      const res = await app.inject('/a')
      expect(res.headers['x-ratelimit-limit']).toBe('2')
      expect(res.headers['x-ratelimit-remaining']).toBe('1')
    })
  })

  describe('limited response', () => {
    it('answers 429 with Retry-After and an RFC 9457 quota-exceeded problem', async () => {
      const app = await appWith({ limit: 1, window: '1m' })
      await app.inject('/')
      const res = await app.inject('/')
      expect(res.statusCode).toBe(429)
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
      const retryAfter = Number(res.headers['retry-after'])
      expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true)
      expect(res.headers.ratelimit).toBe(`"sw1.60000";r=0;t=${retryAfter}`)
      const body = res.json()
      expect(body).toMatchObject({
        type: QUOTA_EXCEEDED_TYPE,
        status: 429,
        'violated-policies': ['sw1.60000'],
      })
      expect(body.title).toEqual(expect.any(String))
      expect(body.detail).toMatch(/^The limit is 1 request per 1 minute\. Retry in \d+ seconds?\.$/)
    })

    it.each<[string, Pick<RateLimitOptions, 'message' | 'statusCode'>, number, RegExp, string]>([
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
        { message: (request: FastifyRequest) => ({ path: request.url }) },
        429,
        /^application\/json/,
        '{"path":"/"}',
      ],
      ['async callback', { message: async () => 'later' }, 429, /^text\/plain/, 'later'],
      ['statusCode', { statusCode: 503, message: 'busy' }, 503, /^text\/plain/, 'busy'],
    ])('message: %s', async (_name, options, status, contentType, text) => {
      const app = await appWith({ limit: 1, window: '1m', ...options })
      await app.inject('/')
      const res = await app.inject('/')
      expect(res.statusCode).toBe(status)
      expect(res.headers['content-type']).toMatch(contentType)
      expect(res.body).toBe(text)
      expect(res.headers['retry-after']).toMatch(/^\d+$/)
    })

    it('a message callback returning nonsense goes to the error handler, naming `message`', async () => {
      const app = await appWith({ limit: 1, window: '1m', message: () => 42 as unknown as string })
      await app.inject('/')
      const res = await app.inject('/')
      expect(res.statusCode).toBe(500)
      expect(res.json().message).toMatch(/^rateLimit option `message` returned number 42/)
    })

    it('onLimited takes over the response, with the headers already set', async () => {
      const app = await appWith({
        limit: 1,
        window: '1m',
        onLimited: (_request, reply, decision) =>
          reply.code(418).send({
            retryAfterMs: decision.retryAfterMs,
            retryAfter: reply.getHeader('retry-after'),
          }),
      })
      await app.inject('/')
      const res = await app.inject('/')
      expect(res.statusCode).toBe(418)
      expect(res.json().retryAfterMs).toBeGreaterThan(0)
      expect(res.json().retryAfter).toBe(res.headers['retry-after'])
      expect(res.headers.ratelimit).toMatch(/r=0/)
    })

    it('an async onLimited that sends later works too', async () => {
      const app = await appWith({
        limit: 1,
        window: '1m',
        onLimited: async (_request, reply) => {
          await new Promise((r) => setTimeout(r, 5))
          await reply.code(429).send('later')
        },
      })
      await app.inject('/')
      const res = await app.inject('/')
      expect(res.statusCode).toBe(429)
      expect(res.body).toBe('later')
    })

    it('an onLimited that throws goes to the error handler', async () => {
      const app = await appWith({
        limit: 1,
        window: '1m',
        onLimited: () => {
          throw new Error('custom handler broke')
        },
      })
      await app.inject('/')
      const res = await app.inject('/')
      expect(res.statusCode).toBe(500)
      expect(res.json().message).toBe('custom handler broke')
    })
  })

  describe('options', () => {
    it('skip lets requests through uncounted and without headers', async () => {
      const store = countingStore()
      const app = await appWith({
        limit: 1,
        window: '1m',
        store,
        skip: (request) => request.headers['x-internal'] === 'yes',
      })
      for (let i = 0; i < 3; i++) {
        const res = await app.inject({ url: '/', headers: { 'x-internal': 'yes' } })
        expect(res.statusCode).toBe(200)
        expect(res.headers.ratelimit).toBeUndefined()
        expect(res.json().rateLimit).toBeUndefined()
      }
      expect(store.consumes).toBe(0)
      expect((await app.inject('/')).statusCode).toBe(200)
    })

    it('cost callback charges each request its cost', async () => {
      const app = await appWith({
        limit: 10,
        window: '1m',
        cost: (request) => Number((request.query as { cost?: string }).cost ?? 1),
      })
      expect((await app.inject('/?cost=4')).headers.ratelimit).toMatch(/;r=6;/)
      expect((await app.inject('/?cost=6')).headers.ratelimit).toMatch(/;r=0;/)
      expect((await app.inject('/?cost=1')).statusCode).toBe(429)
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
    ])(
      'a key callback that %s goes to the error handler, naming `key`',
      async (_name, key, message) => {
        const res = await (await appWith({ limit: 5, window: '1m', key })).inject('/')
        expect(res.statusCode).toBe(500)
        expect(res.json().message).toMatch(message)
        expect(res.json().code).toBe('ERR_LIMITER_KEY')
      },
    )

    it('errors reach a custom error handler', async () => {
      const app = fastify()
      app.setErrorHandler((error: Error & { code?: string }, _request, reply) => {
        reply.code(400).send({ handled: error.code })
      })
      await app.register(rateLimit, {
        limit: 5,
        window: '1m',
        skip: () => {
          throw new Error('bad skip')
        },
      })
      app.get('/', async () => 'ok')
      const res = await app.inject('/')
      expect(res.statusCode).toBe(400)
      expect(res.json()).toEqual({ handled: 'ERR_LIMITER_OPTION' })
    })

    it('a cost callback returning nonsense goes to the error handler, naming `cost`', async () => {
      const res = await (await appWith({ limit: 5, window: '1m', cost: () => 99 })).inject('/')
      expect(res.statusCode).toBe(500)
      expect(res.json().message).toMatch(/^rateLimit option `cost` returned number 99/)
    })

    it('request.rateLimit carries the decision to later handlers', async () => {
      const res = await (await appWith({ limit: 5, window: '1m' })).inject('/')
      expect(res.json().rateLimit).toMatchObject({
        allowed: true,
        limit: 5,
        remaining: 4,
        retryAfterMs: 0,
      })
    })
  })

  describe('invalid options fail at register, naming the option', () => {
    it.each<[string, Record<string, unknown>, RegExp]>([
      ['limit', { limit: -1, window: '1m' }, /`limit`/],
      ['limit', { window: '1m' }, /`limit`/],
      ['window', { limit: 1, window: 'soon' }, /`window`/],
      [
        'redis',
        { limit: 1, window: '1m', store: new MemoryStore(), redis: { evalsha() {}, eval() {} } },
        /`redis`/,
      ],
      ['headers', { limit: 1, window: '1m', headers: 'draft-8' }, /`headers`/],
      ['key', { limit: 1, window: '1m', key: 'ip' }, /`key`/],
      ['max', { max: 5, windowMs: 1000 }, /`max`.*did you mean `limit`/],
      ['statusCode', { limit: 1, window: '1m', statusCode: 200 }, /`statusCode`/],
      ['global', { limit: 1, window: '1m', global: 'yes' }, /`global`/],
      ['hook', { limit: 1, window: '1m', hook: 'onSend' }, /`hook`/],
      ['headers', { global: false, headers: 'draft-8' }, /`headers`/],
      ['window', { global: false, window: 'soon' }, /`window`/],
      ['cost', { global: false, cost: 'one' }, /`cost`/],
    ])('%s (%o)', async (option, options, message) => {
      for (const start of ['register', 'ready', 'listen'] as const) {
        const app = fastify()
        const registered = app.register(rateLimit, options as unknown as RateLimitPluginOptions)
        const error: unknown = await (start === 'register'
          ? registered
          : start === 'ready'
            ? app.ready()
            : app.listen({ port: 0, host: '127.0.0.1' })
        ).then(
          () => undefined,
          (e: unknown) => e,
        )
        expect(error).toBeInstanceOf(Error)
        const { message: text, option: named } = error as Error & { option?: string }
        expect(text).toMatch(message)
        expect(named).toBe(option)
        expect(error instanceof TypeError || error instanceof RangeError).toBe(true)
        await app.close().catch(() => {})
      }
    })
  })
})
