// Compile-time checks (run by `tsc -p packages/fastify`): what a route's `config.rateLimit`
// accepts. Peer option names and a bad hook are compile errors, as they are errors at runtime.
import fastify from 'fastify'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { type LimitHook, type RouteRateLimitOptions, rateLimit } from '../src/index.js'

describe('types', () => {
  it('config.rateLimit takes our options, false, and a hook', async () => {
    const app = fastify()
    await app.register(rateLimit, { limit: 10, window: '1m' })
    app.get('/a', { config: { rateLimit: { limit: 2, window: '1m' } } }, async () => 'a')
    app.get('/b', { config: { rateLimit: false } }, async () => 'b')
    app.get('/c', { config: { rateLimit: { limit: 1, hook: 'preHandler' } } }, async () => 'c')
    app.get('/d', { config: { rateLimit: { key: (request) => request.ip } } }, async () => 'd')
    expectTypeOf<RouteRateLimitOptions['hook']>().toEqualTypeOf<LimitHook | undefined>()
    await app.close()
    expect(true).toBe(true)
  })

  it('waiting and concurrency options compile in register and in config.rateLimit', async () => {
    // (and work: a route that cannot wait unsets the plugin's waiting with `maxDelay: 0`)
    const app = fastify()
    await app.register(rateLimit, {
      algorithm: 'gcra',
      limit: 10,
      window: '1s',
      maxDelay: '2s',
      delayAfter: 2,
    })
    const inflight = { algorithm: 'concurrency', limit: 2, window: '1m', retryAfter: '2s' } as const
    app.get('/a', { config: { rateLimit: { ...inflight, maxDelay: 0 } } }, async () => 'a')
    app.get(
      '/b',
      {
        config: {
          rateLimit: { limits: [inflight, { limit: 5, window: '1s', algorithm: 'gcra' }] },
        },
      },
      async () => 'b',
    )
    // and at runtime, where the route is declared
    expect(() =>
      // @ts-expect-error `delayMs` is express-slow-down's name: ours are `maxDelay`/`delayAfter`
      app.get('/c', { config: { rateLimit: { delayMs: 500 } } }, async () => 'c'),
    ).toThrow(/`delayMs`/)
    await app.ready()
    await app.close()
    expect(true).toBe(true)
  })

  it("peer libraries' names and a bad hook do not compile", () => {
    const app = fastify()
    const h = async () => 'h'
    // @ts-expect-error `max` is @fastify/rate-limit's name: ours is `limit`
    app.get('/x', { config: { rateLimit: { max: 5 } } }, async () => 'x')
    // @ts-expect-error `windowMs` is express-rate-limit's name: ours is `window`
    app.get('/y', { config: { rateLimit: { windowMs: 1000 } } }, async () => 'y')
    // @ts-expect-error `timeWindow` is @fastify/rate-limit's name: ours is `window`
    app.get('/t', { config: { rateLimit: { timeWindow: '1m' } } }, async () => 't')
    // @ts-expect-error `ttl` is @nestjs/throttler's name: ours is `window`
    app.get('/u', { config: { rateLimit: { ttl: 60_000 } } }, async () => 'u')
    // @ts-expect-error 'fixed-window' cannot reserve a slot to wait for
    app.get('/m', { config: { rateLimit: { algorithm: 'fixed-window', maxDelay: '1s' } } }, h)
    // @ts-expect-error retryAfter is a 'concurrency' policy's option
    app.get('/r', { config: { rateLimit: { algorithm: 'gcra', retryAfter: '1s' } } }, h)
    // @ts-expect-error 'onSend' is not a hook a limiter can run in
    app.get('/z', { config: { rateLimit: { hook: 'onSend' } } }, async () => 'z')
    expect(true).toBe(true)
  })
})
