// rateLimit() with the embedded MemoryStore, through supertest, on Koa 2 and 3: the shared adapter
// contract (headers, limited responses, options), then what is Koa's own.

import { createLimiter, MemoryStore } from '@limiter/core'
import request from 'supertest'
import { describe, expect, it } from 'vitest'
import {
  describeMemoryContracts,
  expectOnLimitedAnswer,
} from '../../../test-support/shared-contracts.js'
import { rateLimit } from '../src/index.js'
import { harness, KOA, appWith as makeApp, showErrors } from './helpers.js'

describe.each(KOA)('$version', ({ Koa }) => {
  describeMemoryContracts(harness(Koa), { store: () => new MemoryStore(), createLimiter })

  const appWith = (options: Parameters<typeof makeApp>[1]) => makeApp(Koa, options).callback()

  it('several limiters on one request append one list member each', async () => {
    const app = new Koa()
    app.use(rateLimit({ limit: 10, window: '1m' }))
    app.use(rateLimit({ limit: 2, window: '1s', name: 'burst' }))
    app.use((ctx) => {
      ctx.body = 'a'
    })
    const res = await request(app.callback()).get('/')
    expect(res.headers['ratelimit-policy']).toBe('"gc10/1m";q=10;w=60, "burst";q=2;w=1')
    expect(res.headers.ratelimit).toMatch(/^"gc10\/1m";r=9;t=\d+, "burst";r=1;t=\d+$/)
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
    await expectOnLimitedAnswer(() => request(app).get('/'))
  })

  it('an async onLimited is awaited', async () => {
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
  })

  // Regression: a notification-style onLimited (koa-ratelimit's) dropped `message` for Koa's
  // bare "Too Many Requests"
  it('an onLimited that sets no body gets the default one, message included', async () => {
    const seen: number[] = []
    const app = appWith({
      limit: 1,
      window: '1m',
      message: 'Sometimes You Just Have to Slow Down.',
      onLimited: (_ctx, decision) => {
        seen.push(decision.retryAfterMs)
      },
    })
    await request(app).get('/')
    const refused = await request(app).get('/')
    expect([refused.status, refused.text]).toEqual([429, 'Sometimes You Just Have to Slow Down.'])
    expect(refused.headers['retry-after']).toMatch(/^\d+$/)
    expect(seen).toHaveLength(1)
  })

  it('a key callback sees the context and counts per key', async () => {
    const app = appWith({ limit: 1, window: '1m', key: (ctx) => `user:${ctx.get('x-user')}` })
    expect((await request(app).get('/').set('x-user', 'a')).status).toBe(200)
    expect((await request(app).get('/').set('x-user', 'b')).status).toBe(200)
    expect((await request(app).get('/').set('x-user', 'a')).status).toBe(429)
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
