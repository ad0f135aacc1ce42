// The plugin with the embedded MemoryStore, through fastify.inject, on Fastify 4 and 5: the shared
// adapter contract (headers, limited responses, options, option errors at register, ready and
// listen), then what is Fastify's own.
import { createLimiter, MemoryStore } from '@limiter/core'
import { describe, expect, it } from 'vitest'
import { describeMemoryContracts } from '../../../test-support/shared-contracts.js'
import { type RateLimitPluginOptions, rateLimit } from '../src/index.js'
import { FASTIFY, harness, appWith as makeApp, registerErrors } from './helpers.js'

describe.each(FASTIFY)('$version', ({ fastify }) => {
  describeMemoryContracts(harness(fastify), { store: () => new MemoryStore(), createLimiter })

  const appWith = (options: RateLimitPluginOptions) => makeApp(fastify, options)

  describe('headers', () => {
    it('several limiters on one route append one list member each', async () => {
      const app = await appWith({ limit: 10, window: '1m' })
      app.get(
        '/a',
        { preHandler: app.rateLimit({ limit: 2, window: '1s', name: 'burst' }) },
        async () => 'a',
      )
      const res = await app.inject('/a')
      expect(res.headers['ratelimit-policy']).toBe('"gc10/1m";q=10;w=60, "burst";q=2;w=1')
      expect(res.headers.ratelimit).toMatch(/^"gc10\/1m";r=9;t=\d+, "burst";r=1;t=\d+$/)
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
    it('onLimited(request, reply, decision) takes over the response, with the headers already set', async () => {
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
    // Regression: an onLimited that only noted the refusal (as @fastify/rate-limit's onExceeded
    // does, the name the migration hint points to) let every limited request reach the handler.
    it.each([
      ['a sync', (notes: string[]) => (_request: unknown, _reply: unknown) => void notes.push('x')],
      ['an async', (notes: string[]) => async () => void notes.push('x')],
    ])('%s onLimited that sends nothing gets the default 429, on routes too', async (_, make) => {
      const notes: string[] = []
      const app = await appWith({ limit: 1, window: '1m', onLimited: make(notes) as never })
      let ran = 0
      app.get(
        '/route',
        { config: { rateLimit: { limit: 1, window: '1m', onLimited: make(notes) as never } } },
        async () => {
          ran++
          return 'ok'
        },
      )
      expect((await app.inject('/')).statusCode).toBe(200)
      const refused = await app.inject('/')
      expect(refused.statusCode).toBe(429)
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/)
      expect(refused.headers['retry-after']).toBeDefined()
      expect((await app.inject('/route')).statusCode).toBe(200)
      expect((await app.inject('/route')).statusCode).toBe(429)
      expect(ran).toBe(1)
      expect(notes).toHaveLength(2)
    })
  })

  // Regression (found from outside): `reply.sent` stays false while an async onSend hook of the
  // app runs, so a refused request reached its handler after the 429 (Fastify 5), or the process
  // died on a second send (Fastify 4, and a synchronous onLimited on 5)
  describe('with an async onSend hook in the app', () => {
    it.each([
      ['the default 429', undefined],
      [
        'an onLimited that sends',
        ((_request: unknown, reply: { code(n: number): { send(b: unknown): unknown } }) =>
          void reply.code(429).send({ slow: true })) as never,
      ],
    ])('%s: one answer, and the handler never runs', async (_, onLimited) => {
      const app = await appWith({ limit: 1, window: '1m', ...(onLimited ? { onLimited } : {}) })
      app.addHook('onSend', async (_request, _reply, payload) => {
        await new Promise((r) => setImmediate(r))
        return payload
      })
      let ran = 0
      app.post('/act', async () => {
        ran++
        return 'done'
      })
      const statuses: number[] = []
      for (let i = 0; i < 4; i++)
        statuses.push((await app.inject({ method: 'POST', url: '/act' })).statusCode)
      expect(statuses).toEqual([200, 429, 429, 429])
      expect(ran).toBe(1)
    })
  })

  describe('options', () => {
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
  })

  describe('invalid plugin options fail at register, ready and listen, naming the option', () => {
    it.each<[string, Record<string, unknown>, RegExp]>([
      ['limit', { window: '1m' }, /`limit`/],
      ['global', { limit: 1, window: '1m', global: 'yes' }, /`global`/],
      ['hook', { limit: 1, window: '1m', hook: 'onSend' }, /`hook`/],
      ['headers', { global: false, headers: 'draft-8' }, /`headers`/],
      ['window', { global: false, window: 'soon' }, /`window`/],
      ['cost', { global: false, cost: 'one' }, /`cost`/],
    ])('%s (%o)', async (option, options, message) => {
      for (const error of await registerErrors(fastify, options)) {
        expect(error).toBeInstanceOf(Error)
        const { message: text, option: named } = error as Error & { option?: string }
        expect(text).toMatch(message)
        expect(named).toBe(option)
        expect(error instanceof TypeError || error instanceof RangeError).toBe(true)
      }
    })
  })
})
