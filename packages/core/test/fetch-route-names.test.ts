// withRateLimit with options on a shared store (a real Redis): a limiter's default name comes
// from its numbers, so two route handlers with the same numbers would count in one counter.
// Unnamed options on a shared store throw at construction; named ones keep their own budgets.
import { describe, expect, it } from 'vitest'
import { createFetchLimiter, type FetchLimiterOptions, withRateLimit } from '../src/fetch/index.js'
import { MemoryStore } from '../src/index.js'
import { useRedis } from './setup/redis.js'

const redis = useRedis()

const post = (path: string, ip = '203.0.113.7') =>
  new Request(`http://app.test${path}`, { method: 'POST', headers: { 'x-forwarded-for': ip } })

const ok = (body: string) => async () => new Response(body)

const unnamedError = (option: string) =>
  expect.objectContaining({
    name: 'LimiterError',
    code: 'ERR_LIMITER_OPTION',
    message: expect.stringMatching(new RegExp(`\`${option}\`.*\`name\`.*share one budget`)),
  })

describe('withRateLimit options on a shared store', () => {
  it('two route handlers on one Redis: unnamed options throw, named ones keep their own budgets', async () => {
    const common = { limit: 3, window: '15m', redis: redis.client, prefix: 'rn1:' } as const
    // the same numbers, no name: both would count in `rn1:gc3/15m:{ip}`
    expect(() => withRateLimit(ok('logged in'), common)).toThrow(unnamedError('redis'))
    const login = withRateLimit(ok('logged in'), { ...common, name: 'login' })
    const reset = withRateLimit(ok('reset sent'), { ...common, name: 'reset' })
    for (let i = 0; i < 3; i++) expect((await login(post('/api/login'))).status).toBe(200)
    expect((await login(post('/api/login'))).status).toBe(429)
    // the logins used up their own budget, not the reset route's
    expect((await reset(post('/api/reset'))).status).toBe(200)
    expect((await redis.client.keys('rn1:*')).sort()).toEqual([
      'rn1:login:gc:{203.0.113.7}',
      'rn1:reset:gc:{203.0.113.7}',
    ])
    // a FetchLimiter given instead of options is shared as it is, named or not
    const shared = createFetchLimiter({ ...common, prefix: 'rn2:', trustProxy: 1 })
    const a = withRateLimit(ok('a'), shared)
    const b = withRateLimit(ok('b'), shared)
    for (let i = 0; i < 2; i++) expect((await a(post('/a'))).status).toBe(200)
    expect((await b(post('/b'))).status).toBe(200)
    expect((await a(post('/a'))).status).toBe(429)
  })

  it('a proxy.ts limiter and a route limiter with equal numbers: each counts a request once', async () => {
    const common = { limit: 2, window: '1m', redis: redis.client, prefix: 'rn3:' } as const
    const proxy = createFetchLimiter({ ...common, name: 'proxy', trustProxy: 1 })
    expect(() => withRateLimit(ok('ok'), common)).toThrow(unnamedError('redis'))
    const route = withRateLimit(ok('ok'), { ...common, name: 'route' })
    // each request passes the proxy, then the route: 2 requests pass both
    const through = () => proxy.handle(post('/api/x'), () => route(post('/api/x')))
    expect((await through()).status).toBe(200)
    expect((await through()).status).toBe(200)
    expect((await through()).status).toBe(429)
  })

  it('`store` or `limits`: every entry named is enough, one unnamed is not; no store needs no name', async () => {
    const store = new MemoryStore()
    expect(() =>
      withRateLimit(ok('ok'), {
        limits: [
          { limit: 1, window: '1s', name: 'burst' },
          { limit: 5, window: '1m' },
        ],
        store,
      }),
    ).toThrow(unnamedError('store'))
    const named = withRateLimit(ok('ok'), {
      limits: [
        { limit: 1, window: '1s', name: 'burst' },
        { limit: 5, window: '1m', name: 'steady' },
      ],
      store,
    })
    expect((await named(post('/a'))).status).toBe(200)
    // policies chosen per request: their names are unknown here, so the limiter needs one
    const tiers = { limits: () => [{ limit: 5, window: '1m' }], redis: redis.client } as const
    expect(() => withRateLimit(ok('ok'), tiers)).toThrow(unnamedError('redis'))
    const perRequest = withRateLimit(ok('ok'), { ...tiers, name: 'tiers', prefix: 'rn4:' })
    expect((await perRequest(post('/b'))).status).toBe(200)
    // a MemoryStore of each limiter's own (no `store`, no `redis`): two budgets, no name needed
    const c = withRateLimit(ok('c'), { limit: 1, window: '1m' })
    const d = withRateLimit(ok('d'), { limit: 1, window: '1m' })
    expect((await c(post('/c'))).status).toBe(200)
    expect((await d(post('/d'))).status).toBe(200)
  })
})

describe('options given as an array', () => {
  it('createFetchLimiter and withRateLimit say they expected an object', () => {
    const array = [{ limit: 1, window: '1m' }] as unknown as FetchLimiterOptions
    expect(() => createFetchLimiter(array)).toThrow(/`options`: expected an object, got an array/)
    expect(() => withRateLimit(async () => new Response('ok'), array)).toThrow(
      /`options`: expected an object, got an array/,
    )
  })
})
