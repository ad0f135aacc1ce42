// Compile-time checks (run by `tsc -p packages/koa`): the public types as a user meets them.
import Router from '@koa/router'
import Koa, { type Context } from 'koa'
import { describe, expect, expectTypeOf, it } from 'vitest'
import {
  type Decision,
  type OnLimited,
  type RateLimitOptions,
  type RateLimitState,
  rateLimit,
} from '../src/index.js'

describe('types', () => {
  it('ctx.state.rateLimit is a Decision on a default Koa app', () => {
    const app = new Koa()
    app.use(rateLimit({ limit: 100, window: '1m' }))
    app.use((ctx) => {
      expectTypeOf(ctx.state.rateLimit).toEqualTypeOf<Decision | undefined>()
    })
  })

  it('apps with their own state type add RateLimitState', () => {
    const app = new Koa<{ user?: string } & RateLimitState>()
    app.use(rateLimit({ limit: 100, window: '1m', key: (ctx) => ctx.state.user ?? 'anonymous' }))
    app.use((ctx) => {
      expectTypeOf(ctx.state.rateLimit).toEqualTypeOf<Decision | undefined>()
      expectTypeOf(ctx.state.user).toEqualTypeOf<string | undefined>()
    })
  })

  it('waiting and concurrency options compile; retryAfter belongs to a policy', () => {
    const app = new Koa()
    app.use(rateLimit({ algorithm: 'gcra', limit: 10, window: '1s', maxDelay: 500, delayAfter: 2 }))
    app.use(rateLimit({ algorithm: 'concurrency', limit: 2, window: '1m', retryAfter: '2s' }))
    const inflight = { algorithm: 'concurrency', limit: 2, window: '1m', retryAfter: '2s' } as const
    app.use(
      rateLimit({
        limits: [inflight, { limit: 5, window: '1s', algorithm: 'gcra' }],
        maxDelay: '1s',
      }),
    )
    // @ts-expect-error with `limits`, retryAfter goes in the concurrency policy
    const beside: RateLimitOptions = { limits: [inflight], retryAfter: '2s' }
    expect(beside).toBeDefined()
    expect(() =>
      // @ts-expect-error maxDelay needs an algorithm that can reserve a slot
      rateLimit({ algorithm: 'sliding-log', limit: 10, window: '1s', maxDelay: '1s' }),
    ).toThrow(/`maxDelay`/)
    expect(() =>
      // @ts-expect-error retryAfter is a 'concurrency' policy's option
      rateLimit({ algorithm: 'token-bucket', limit: 10, window: '1s', retryAfter: '1s' }),
    ).toThrow(/`retryAfter`/)
    expect(() =>
      // @ts-expect-error `duration` is rate-limiter-flexible's (seconds): use window: '60s'
      rateLimit({ limit: 10, duration: 60 }),
    ).toThrow(/use `window: '60s'`/)
  })

  it('callbacks get the Koa context; onLimited gets it and the decision', () => {
    expectTypeOf<Parameters<NonNullable<RateLimitOptions['skip']>>[0]>().toExtend<Context>()
    expectTypeOf<Parameters<OnLimited>[1]>().toEqualTypeOf<Decision>()
    const options: RateLimitOptions = {
      limit: 5,
      window: '15m',
      key: (ctx) => ctx.get('x-user'),
      cost: (ctx) => (ctx.method === 'POST' ? 2 : 1),
      message: (ctx, decision) => ({ path: ctx.path, retryAfterMs: decision.retryAfterMs }),
      onLimited: (ctx, decision) => {
        ctx.status = 429
        ctx.body = { wait: decision.retryAfterMs }
      },
    }
    expectTypeOf(rateLimit(options)).toBeFunction()
  })

  it('fits @koa/router routes, with the route context in the callbacks', () => {
    const router = new Router()
    router.get(
      '/search',
      rateLimit({ limit: 10, window: '1s', algorithm: 'token-bucket', burst: 20 }),
      (ctx) => {
        ctx.body = ctx.state.rateLimit?.remaining
      },
    )
    router.post(
      '/users/:id',
      rateLimit({ limit: 5, window: '1m', key: (ctx) => `user:${ctx.params.id}` }),
      (ctx) => {
        ctx.body = 'ok'
      },
    )
    router.use(rateLimit({ limit: 100, window: '1m' }))
  })

  it('rejects options of the wrong type, at compile time and at construction', () => {
    // @ts-expect-error `limit` is a number
    expect(() => rateLimit({ limit: '5', window: '1m' })).toThrow(/`limit`/)
    // @ts-expect-error `key` is a callback
    expect(() => rateLimit({ limit: 5, window: '1m', key: 'ip' })).toThrow(/`key`/)
    // @ts-expect-error unknown algorithm
    expect(() => rateLimit({ limit: 5, window: '1m', algorithm: 'leaky' })).toThrow(/`algorithm`/)
  })
})
