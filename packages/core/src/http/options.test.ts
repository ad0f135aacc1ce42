import { describe, expect, it } from 'vitest'
import { LimiterRangeError, LimiterTypeError } from '../common/errors.js'
import { MemoryStore } from '../stores/memory-store.js'
import type { LimitSet } from './limit-sets.js'
import { type RateLimitOptions, resolveRateLimitOptions } from './options.js'

interface Req {
  readonly ip?: string
}
const adapter = { ip: (req: Req) => req.ip }
const resolve = (options: RateLimitOptions<Req, () => void>) =>
  resolveRateLimitOptions(options, adapter)
const fakeRedis = {
  evalsha: async () => [1, 0, 0, 0],
  eval: async () => [1, 0, 0, 0],
  del: async () => 0,
}

describe('resolveRateLimitOptions: invalid options throw at construction, naming the option', () => {
  const base = { limit: 10, window: '1m' }
  it.each<
    [string, Record<string, unknown>, typeof LimiterTypeError | typeof LimiterRangeError, RegExp]
  >([
    ['limit', { ...base, limit: 0 }, LimiterRangeError, /`limit`/],
    ['limit', { ...base, limit: '10' }, LimiterTypeError, /`limit`/],
    ['window', { ...base, window: '1 fortnight' }, LimiterTypeError, /`window`/],
    ['algorithm', { ...base, algorithm: 'leaky' }, LimiterRangeError, /`algorithm`/],
    ['burst', { ...base, algorithm: 'sliding-window', burst: 20 }, LimiterRangeError, /`burst`/],
    [
      'redis',
      { ...base, redis: fakeRedis, store: new MemoryStore() },
      LimiterRangeError,
      /either `store` or `redis`/,
    ],
    ['redis', { ...base, redis: {} }, LimiterTypeError, /`redis`.*ioredis/],
    ['store', { ...base, store: {} }, LimiterTypeError, /`store`/],
    ['name', { ...base, name: 'a{b}' }, LimiterRangeError, /`name`/],
    ['prefix', { ...base, prefix: 5 }, LimiterTypeError, /`prefix`/],
    ['key', { ...base, key: 'ip' }, LimiterTypeError, /`key`.*function/],
    ['skip', { ...base, skip: true }, LimiterTypeError, /`skip`/],
    ['onLimited', { ...base, onLimited: 'x' }, LimiterTypeError, /`onLimited`/],
    ['cost', { ...base, cost: 0 }, LimiterRangeError, /`cost`.*1 to burst \(10\)/],
    ['cost', { ...base, cost: 11 }, LimiterRangeError, /`cost`/],
    ['cost', { ...base, cost: '2' }, LimiterTypeError, /`cost`/],
    ['statusCode', { ...base, statusCode: 200 }, LimiterRangeError, /`statusCode`/],
    ['statusCode', { ...base, statusCode: '429' }, LimiterTypeError, /`statusCode`/],
    ['message', { ...base, message: 5 }, LimiterTypeError, /`message`/],
    ['message', { ...base, message: null }, LimiterTypeError, /`message`/],
    ['message', { ...base, message: { n: 1n } }, LimiterTypeError, /`message`.*JSON/],
    ['headers', { ...base, headers: 'draft-9' }, LimiterRangeError, /`headers`/],
    ['headers', { ...base, headers: true }, LimiterTypeError, /`headers`/],
    [
      'headers',
      { ...base, headers: ['draft-10', 'draft-7'] },
      LimiterRangeError,
      /`headers`.*cannot be sent with/,
    ],
    [
      'skipSuccessfulRequests',
      { ...base, skipSuccessfulRequests: 'yes' },
      LimiterTypeError,
      /`skipSuccessfulRequests`/,
    ],
    [
      'skipFailedRequests',
      { ...base, skipFailedRequests: 1 },
      LimiterTypeError,
      /`skipFailedRequests`/,
    ],
    [
      'releaseOnDisconnect',
      { ...base, releaseOnDisconnect: 'yes' },
      LimiterTypeError,
      /`releaseOnDisconnect`/,
    ],
    ['failureMode', { ...base, failureMode: 'fail-open' }, LimiterRangeError, /`failureMode`/],
    ['timeout', { ...base, timeout: -1 }, LimiterRangeError, /`timeout`/],
    ['onError', { ...base, onError: 'log' }, LimiterTypeError, /`onError`/],
    ['circuitBreaker', { ...base, circuitBreaker: 'on' }, LimiterTypeError, /`circuitBreaker`/],
    ['blockedCache', { ...base, blockedCache: true }, LimiterTypeError, /`blockedCache`/],
    [
      'max',
      { max: 10, window: '1m' },
      LimiterRangeError,
      /`max`: is not an option \(did you mean `limit`\?\)/,
    ],
    ['windowMs', { limit: 10, windowMs: 60_000 }, LimiterRangeError, /did you mean `window`/],
    // express-rate-limit v8's option: refused with what to use instead, not a dead end
    [
      'ipv6Subnet',
      { ...base, ipv6Subnet: 56 },
      LimiterRangeError,
      /`ipv6Subnet`: is not an option \(.*`key: \(req\) => ipKey\(req\.ip, \{ ipv6Subnet: 56 \}\)`.*\), got 56/,
    ],
  ])('%s: %o', (option, options, errorClass, message) => {
    let error: unknown
    try {
      resolve(options as unknown as RateLimitOptions<Req, () => void>)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(errorClass)
    expect((error as Error).message).toMatch(message)
    expect((error as { option?: string }).option).toBe(option)
    expect((error as { code?: string }).code).toBe('ERR_LIMITER_OPTION')
  })

  it('rejects a non-object', () => {
    expect(() => resolve(undefined as unknown as RateLimitOptions<Req, () => void>)).toThrow(
      TypeError,
    )
  })
})

describe('resolveRateLimitOptions: defaults', () => {
  it('fills the documented defaults', () => {
    const rl = resolve({ limit: 100, window: '1m' })
    expect((rl.limits as LimitSet).limiter.policy).toEqual({
      algorithm: 'gcra',
      limit: 100,
      windowMs: 60_000,
      burst: 100,
    })
    expect(rl.headers).toEqual(['draft-10'])
    expect(rl.statusCode).toBe(429)
    expect(rl.cost).toBe(1)
    expect(rl.scoped).toBe(true)
    expect(rl.defaultKey).toBe(true)
    expect(rl.skipSuccessfulRequests).toBe(false)
    expect(rl.releaseOnDisconnect).toBe(false)
    expect(rl.messageBody).toBeUndefined()
  })

  it('derives the name from the policy, the same in every process', () => {
    const a = resolve({ limit: 5, window: '15m', algorithm: 'sliding-log' })
    const b = resolve({ limit: 5, window: 900_000, algorithm: 'sliding-log' })
    expect((a.limits as LimitSet).limiter.name).toBe('sl5/15m')
    expect((b.limits as LimitSet).limiter.name).toBe((a.limits as LimitSet).limiter.name)
  })

  it('a user name turns route scoping off', () => {
    expect(resolve({ limit: 5, window: '1s', name: 'login' }).scoped).toBe(false)
  })

  it('names the header policy after the limiter alone: a route scope stays in the key', () => {
    const rl = resolve({ limit: 5, window: '1s' })
    expect((rl.limits as LimitSet).headerPolicy.name).toBe('gc5/1s')
  })

  it.each<[unknown, readonly string[]]>([
    ['legacy', ['legacy']],
    [
      ['draft-7', 'draft-6', 'draft-7'],
      ['draft-7', 'draft-6'],
    ],
    [
      ['draft-10', 'legacy'],
      ['draft-10', 'legacy'],
    ],
    [false, []],
    [[], []],
  ])('headers %o -> %o', (headers, expected) => {
    expect(
      resolve({ limit: 1, window: '1s', headers } as RateLimitOptions<Req, () => void>).headers,
    ).toEqual(expected)
  })

  it('serializes a static message once', () => {
    expect(resolve({ limit: 1, window: '1s', message: 'slow down' }).messageBody).toEqual({
      contentType: 'text/plain; charset=utf-8',
      body: 'slow down',
    })
    expect(
      resolve({ limit: 1, window: '1s', message: { error: 'slow down' } }).messageBody,
    ).toEqual({
      contentType: 'application/json; charset=utf-8',
      body: '{"error":"slow down"}',
    })
  })

  it('accepts an ioredis-shaped client as `redis` and extra adapter options', () => {
    const rl = resolveRateLimitOptions(
      { limit: 1, window: '1s', redis: fakeRedis, global: false } as RateLimitOptions<Req>,
      {
        ...adapter,
        extraOptions: ['global'],
      },
    )
    expect((rl.limits as LimitSet).limiter.name).toBe('gc1/1s')
  })
})
