// Compile-time checks (run by `tsc -p packages/nest`): what forRoot and @RateLimit accept, and the
// request type their callbacks see. Peer option names are compile errors, as they are at runtime.
import { Controller, Get } from '@nestjs/common'
import type { Request } from 'express'
import type { FastifyRequest } from 'fastify'
import { describe, expect, expectTypeOf, it } from 'vitest'
import {
  type Decision,
  LimiterModule,
  type OnLimited,
  RateLimit,
  type RateLimitException,
  type RequestLike,
} from '../src/index.js'

describe('types', () => {
  it("callbacks see the platform's request when annotated, RequestLike otherwise", () => {
    LimiterModule.forRoot({ key: (req: Request) => req.ip ?? 'none', window: '1m' })
    LimiterModule.forRoot({ key: (request: FastifyRequest) => request.ip })
    LimiterModule.forRoot({
      key: (req) => {
        expectTypeOf(req).toEqualTypeOf<RequestLike>()
        return req.ip ?? ''
      },
    })
    @Controller()
    class Typed {
      @Get()
      @RateLimit({ limit: 5, window: '1m', skip: (req: Request) => req.path === '/health' })
      get() {}
    }
    expect(Typed).toBeTypeOf('function')
  })

  it("req.rateLimit is the decision on Express's and Fastify's request types", () => {
    expectTypeOf<Request['rateLimit']>().toEqualTypeOf<Decision | undefined>()
    expectTypeOf<FastifyRequest['rateLimit']>().toEqualTypeOf<Decision | undefined>()
    const handler = (req: Request) => req.rateLimit?.remaining
    expectTypeOf(handler).returns.toEqualTypeOf<number | undefined>()
    expect(true).toBe(true)
  })

  it('peer option names are errors; onLimited gets the context and the decision', () => {
    // @ts-expect-error `max` is express-rate-limit's name: use `limit`
    LimiterModule.forRoot({ max: 5 })
    // @ts-expect-error `ttl` is @nestjs/throttler's name: use `window` (ttl is ms, seconds before v5)
    RateLimit({ ttl: 60_000 })
    // @ts-expect-error `maxDelay` needs an algorithm that can reserve a slot
    RateLimit({ algorithm: 'fixed-window', limit: 5, window: '1s', maxDelay: '1s' })
    // @ts-expect-error `retryAfter` is a 'concurrency' policy's option
    RateLimit({ algorithm: 'gcra', limit: 5, window: '1s', retryAfter: '1s' })
    RateLimit({ algorithm: 'concurrency', limit: 5, window: '1m', retryAfter: '1s' })
    RateLimit({ algorithm: 'gcra', limit: 5, window: '1s', maxDelay: '1s' })
    // @ts-expect-error `limits` and `limit` are one or the other
    RateLimit({ limit: 5, limits: [{ limit: 5, window: '1m' }] })
    expectTypeOf<Parameters<OnLimited>[1]>().toEqualTypeOf<Decision>()
    expectTypeOf<RateLimitException['decision']>().toEqualTypeOf<Decision>()
    expect(true).toBe(true)
  })
})
