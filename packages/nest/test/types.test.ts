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

  it('peer option names are errors; onLimited gets the context and the decision', () => {
    // @ts-expect-error `max` is express-rate-limit's name: use `limit`
    LimiterModule.forRoot({ max: 5 })
    // @ts-expect-error `ttl` is not an option: use `window`
    RateLimit({ ttl: 60_000 })
    // @ts-expect-error `limits` and `limit` are one or the other
    RateLimit({ limit: 5, limits: [{ limit: 5, window: '1m' }] })
    expectTypeOf<Parameters<OnLimited>[1]>().toEqualTypeOf<Decision>()
    expectTypeOf<RateLimitException['decision']>().toEqualTypeOf<Decision>()
    expect(true).toBe(true)
  })
})
