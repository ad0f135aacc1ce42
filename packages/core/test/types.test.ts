// Compile-time checks (run by `tsc -p packages/core`): the types refuse what the runtime refuses,
// with the advice as the type. Each `@ts-expect-error` is a check: it fails to compile if the line
// compiles. The runtime half of each line is in option-names.test.ts, delay.test.ts and
// concurrency.test.ts.
import { describe, expect, expectTypeOf, it } from 'vitest'
import type { RateLimitOptions } from '../src/http/index.js'
import {
  type Algorithm,
  createLimiter,
  type DefaultAlgorithm,
  definePolicy,
  type LimiterOptions,
  type LimitSpec,
  type NotAnOption,
  type OnePolicy,
  type OnePolicyOf,
} from '../src/index.js'

type Options = RateLimitOptions<{ ip: string }>
// What `rateLimit(...)` takes in every adapter, checked without one.
const options = (o: Options) => o
const limiter = (o: LimiterOptions) => o

describe('types', () => {
  it('peer names are errors whose type says what to write', () => {
    // @ts-expect-error `max` is express-rate-limit's name: use `limit`
    options({ max: 5, window: '1m' })
    // @ts-expect-error `windowMs`: use `window`
    options({ limit: 5, windowMs: 60_000 })
    // @ts-expect-error `ttl` is @nestjs/throttler's name: use `window`
    options({ limit: 5, ttl: 60_000 })
    // @ts-expect-error `points` is rate-limiter-flexible's name: use `limit`
    limiter({ points: 5, window: '1m' })
    // @ts-expect-error `duration` is rate-limiter-flexible's name (seconds): use `window: '60s'`
    limiter({ limit: 5, duration: 60 })
    // @ts-expect-error `blockDuration`: call limiter.block
    limiter({ limit: 5, window: '1m', blockDuration: 900 })
    expectTypeOf<NonNullable<Options['max']>>().toEqualTypeOf<
      NotAnOption<'use `limit` instead of `max`'>
    >()
    expectTypeOf<NonNullable<LimiterOptions['duration']>>().toEqualTypeOf<
      NotAnOption<"use `window` instead of `duration`, with a unit: rate-limiter-flexible's `duration: 60` (seconds) is `window: '60s'`, koa-ratelimit's (ms) is `window: '60ms'`">
    >()
    expect(true).toBe(true)
  })

  it('maxDelay and delayAfter need an algorithm that reserves, where it is a literal', () => {
    for (const algorithm of ['fixed-window', 'sliding-window', 'sliding-log'] as const) {
      // @ts-expect-error a counting algorithm cannot reserve a slot
      options({ algorithm, limit: 5, window: '1s', maxDelay: '1s' })
      // @ts-expect-error a counting algorithm cannot reserve a slot
      limiter({ algorithm, limit: 5, window: '1s', delayAfter: 2 })
      // no waiting is fine everywhere
      options({ algorithm, limit: 5, window: '1s', maxDelay: 0 })
    }
    // @ts-expect-error a concurrency limit cannot know when a slot frees
    options({ algorithm: 'concurrency', limit: 5, window: '1s', maxDelay: '1s' })
    for (const algorithm of ['gcra', 'token-bucket', 'leaky-bucket'] as const) {
      options({ algorithm, limit: 5, window: '1s', maxDelay: '1s', delayAfter: 2 })
      limiter({ algorithm, limit: 5, window: '1s', maxDelay: 500 })
    }
    // several policies: waiting is checked at runtime, as concurrency may sit beside gcra
    options({
      limits: [
        { algorithm: 'gcra', limit: 5, window: '1s' },
        { algorithm: 'concurrency', limit: 2, window: '1m' },
      ],
      maxDelay: '1s',
    })
    expect(true).toBe(true)
  })

  it("retryAfter is a 'concurrency' option, in one policy and in limits[]", () => {
    options({ algorithm: 'concurrency', limit: 2, window: '1m', retryAfter: '2s' })
    // @ts-expect-error a rate refusal's Retry-After is exact
    options({ algorithm: 'gcra', limit: 2, window: '1m', retryAfter: '2s' })
    // @ts-expect-error not with the default algorithm either
    limiter({ limit: 2, window: '1m', retryAfter: '2s' })
    // @ts-expect-error nor in a limits entry
    const spec: LimitSpec = { algorithm: 'fixed-window', limit: 2, window: '1m', retryAfter: 5 }
    expect(() =>
      // @ts-expect-error nor in definePolicy (which throws, naming it)
      definePolicy({ algorithm: 'sliding-log', limit: 2, window: '1m', retryAfter: '1s' }),
    ).toThrow(/`retryAfter`/)
    expect(spec).toBeDefined()
  })

  it('an algorithm typed Algorithm compiles as before, without per-algorithm options', () => {
    const fromConfig = (name: string) => name as Algorithm
    const algorithm = fromConfig('gcra')
    options({ algorithm, limit: 5, window: '1m', burst: 5 })
    const l = createLimiter({ algorithm, limit: 5, window: '1m' })
    expect(l.policy.algorithm).toBe('gcra')
  })

  it('no algorithm takes what the default algorithm takes', () => {
    // DefaultAlgorithm must name what definePolicy defaults to (change both together).
    expect(definePolicy({ limit: 1, window: '1s' }).algorithm).toBe<DefaultAlgorithm>('gcra')
    type NoAlgorithm = Extract<OnePolicy, { readonly algorithm?: undefined }>
    type DefaultOne = OnePolicyOf<DefaultAlgorithm>
    expectTypeOf<NoAlgorithm>().not.toBeNever()
    expectTypeOf<NoAlgorithm['maxDelay']>().toEqualTypeOf<DefaultOne['maxDelay']>()
    expectTypeOf<NoAlgorithm['retryAfter']>().toEqualTypeOf<DefaultOne['retryAfter']>()
  })
})
