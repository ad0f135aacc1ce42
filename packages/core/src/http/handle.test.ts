import { EventEmitter } from 'node:events'
import { describe, expect, it } from 'vitest'
import { countGiveBacks } from '../../../../test-support/adapter-helpers.js'
import { LimiterError } from '../common/errors.js'
import { MemoryStore } from '../stores/memory-store.js'
import type { Store, StoreCall } from '../stores/store.js'
import { beginCheck, checkRequest as checkAny, isThenable, withCheck } from './check.js'
import { applyHeaders, limitedResponse, refundOnce, refundWhenDone, whenDue } from './handle.js'
import type { HeaderValue } from './merge-headers.js'
import {
  type RateLimitBaseOptions,
  type RateLimitOptions,
  type ResolvedRateLimit,
  resolveRateLimitOptions,
} from './options.js'
import { giveBackReservation } from './owed.js'
import { QUOTA_EXCEEDED_TYPE } from './problem.js'
import type { CheckResult, RateLimitCheck } from './types.js'

interface Req {
  readonly ip?: string | undefined
  readonly user?: unknown
}
const req: Req = { ip: '::ffff:10.0.0.1' }
const resolve = (options: RateLimitOptions<Req>) =>
  resolveRateLimitOptions(options, { ip: (r: Req) => r.ip })

/** A MemoryStore that counts refunds and records keys. */
function countingStore(): Store & { refunds: number; keys: string[] } {
  const inner = new MemoryStore()
  const store = {
    refunds: 0,
    keys: [] as string[],
    consume(call: StoreCall) {
      store.keys.push(call.key)
      return inner.consume(call)
    },
    refund(call: StoreCall) {
      store.refunds++
      return inner.refund(call)
    },
    reset: (call: Omit<StoreCall, 'cost'>) => inner.reset(call),
    local: true,
  }
  return store
}

async function errorOf(promise: Promise<unknown>): Promise<LimiterError> {
  try {
    await promise
  } catch (error) {
    return error as LimiterError
  }
  throw new Error('expected a rejection')
}

// These cases use no `deny`: a check is counted or skipped.
const checkRequest = <Req>(
  rl: ResolvedRateLimit<Req, unknown>,
  req: Req,
  scope?: string,
): Promise<RateLimitCheck | undefined> =>
  checkAny(rl, req, scope) as Promise<RateLimitCheck | undefined>

describe('checkRequest', () => {
  it('keys by client IP by default, with IPv4-mapped folded, and returns headers', async () => {
    const store = countingStore()
    const check = await checkRequest(resolve({ limit: 2, window: '1m', store }), req)
    expect(store.keys).toEqual(['10.0.0.1'])
    expect(check?.decision).toMatchObject({ allowed: true, limit: 2, remaining: 1 })
    expect(check?.headers[0]).toEqual(['RateLimit-Policy', '"gc2/1m";q=2;w=60'])
    // gcra: full again once this request's interval (window / limit) has passed
    expect(check?.headers[1]).toEqual(['RateLimit', '"gc2/1m";r=1;t=30'])
    expect(check?.headers).toHaveLength(2)
  })

  it('separates route scopes for a default-named limiter, but not for a named one', async () => {
    const store = countingStore()
    const rl = resolve({ limit: 2, window: '1m', store })
    const check = await checkRequest(rl, req, 'POST /login')
    await checkRequest(
      resolve({ limit: 2, window: '1m', store, name: 'shared' }),
      req,
      'POST /login',
    )
    expect(store.keys).toEqual(['POST /login#10.0.0.1', '10.0.0.1'])
    // the scope is in the key, not in the name clients read
    expect(check?.policy.name).toBe('gc2/1m')
  })

  it("names a route limiter's policies as given, in headers and the problem body", async () => {
    const limits = [
      { name: 'route-a', limit: 1, window: '1m' },
      { name: 'route-b', limit: 5, window: '1h' },
    ]
    const rl = resolve({ limits })
    await checkRequest(rl, req, 'GET /r')
    const check = (await checkRequest(rl, req, 'GET /r')) as RateLimitCheck
    expect(check.key).toBe('GET /r#10.0.0.1')
    expect(check.headers[0]).toEqual([
      'RateLimit-Policy',
      '"route-a";q=1;w=60, "route-b";q=5;w=3600',
    ])
    const body = JSON.parse((await limitedResponse(rl, req, check)).body)
    expect(body['violated-policies']).toEqual(['route-a'])
  })

  it('denies with Retry-After once the limit is used', async () => {
    const rl = resolve({ limit: 1, window: '10s' })
    await checkRequest(rl, req)
    const check = await checkRequest(rl, req)
    expect(check?.decision.allowed).toBe(false)
    const retry = Number(check?.headers.find(([n]) => n === 'Retry-After')?.[1])
    expect(retry).toBeGreaterThanOrEqual(1)
    expect(retry).toBeLessThanOrEqual(10)
    expect(check?.headers.find(([n]) => n === 'RateLimit')?.[1]).toBe(`"gc1/10s";r=0;t=${retry}`)
  })

  it('skips without counting', async () => {
    const store = countingStore()
    expect(
      await checkRequest(resolve({ limit: 1, window: '1s', store, skip: () => true }), req),
    ).toBeUndefined()
    expect(store.keys).toEqual([])
  })

  it('uses the cost callback', async () => {
    const check = await checkRequest(resolve({ limit: 10, window: '1s', cost: async () => 4 }), req)
    expect(check?.decision.remaining).toBe(6)
    expect(check?.cost).toBe(4)
  })

  it.each<[string, Partial<RateLimitBaseOptions<Req>>, RegExp, string]>([
    [
      'key throws',
      {
        key: () => {
          throw new Error('no session')
        },
      },
      /^rateLimit option `key` threw: no session$/,
      'ERR_LIMITER_KEY',
    ],
    [
      'key rejects',
      { key: () => Promise.reject(new Error('db down')) },
      /^rateLimit option `key` threw: db down$/,
      'ERR_LIMITER_KEY',
    ],
    [
      'key returns undefined',
      { key: () => undefined as unknown as string },
      /^rateLimit option `key` returned undefined/,
      'ERR_LIMITER_KEY',
    ],
    [
      'key returns empty',
      { key: () => '' },
      /^rateLimit option `key` returned an empty string/,
      'ERR_LIMITER_KEY',
    ],
    [
      'key returns NaN',
      { key: () => Number.NaN },
      /^rateLimit option `key` returned number NaN/,
      'ERR_LIMITER_KEY',
    ],
    [
      'cost returns 0',
      { cost: () => 0 },
      /^rateLimit option `cost` returned number 0 \(expected an integer from 1 to burst, 3\)/,
      'ERR_LIMITER_COST',
    ],
    [
      'cost returns too much',
      { cost: () => 4 },
      /^rateLimit option `cost` returned number 4/,
      'ERR_LIMITER_COST',
    ],
    [
      'cost throws',
      {
        cost: () => {
          throw new Error('x')
        },
      },
      /^rateLimit option `cost` threw: x/,
      'ERR_LIMITER_COST',
    ],
    [
      'skip throws',
      {
        skip: () => {
          throw new Error('y')
        },
      },
      /^rateLimit option `skip` threw: y/,
      'ERR_LIMITER_OPTION',
    ],
  ])('%s: rejects naming the option', async (_name, options, message, code) => {
    const error = await errorOf(checkRequest(resolve({ limit: 3, window: '1s', ...options }), req))
    expect(error).toBeInstanceOf(LimiterError)
    expect(error.message).toMatch(message)
    expect(error.code).toBe(code)
  })

  it('the default key explains a missing client IP', async () => {
    const error = await errorOf(
      checkRequest(resolve({ limit: 3, window: '1s' }), { ip: undefined }),
    )
    expect(error.message).toMatch(/No client IP/)
  })
})

async function deniedCheck(options: Partial<RateLimitBaseOptions<Req>> = {}) {
  const rl = resolve({ limit: 1, window: '1m', ...options })
  await checkRequest(rl, req, 'GET /x')
  const check = (await checkRequest(rl, req, 'GET /x')) as RateLimitCheck
  return { rl, check }
}

describe('limitedResponse', () => {
  it("a message callback written for express-rate-limit's (req, res) says what it is given", async () => {
    const express = (_req: unknown, res: { status(code: number): unknown }) => res.status(429)
    const { rl, check } = await deniedCheck({ message: express as never })
    // (before: only "threw: res.status is not a function", at the first limited request)
    await expect(limitedResponse(rl, req, check)).rejects.toThrow(
      /^rateLimit option `message` threw: .*status is not a function \(it is called as message\(req, decision\): the second argument is the Decision, not the response/,
    )
  })

  it('defaults to an RFC 9457 quota-exceeded problem', async () => {
    const { rl, check } = await deniedCheck()
    const response = await limitedResponse(rl, req, check)
    expect(response.status).toBe(429)
    expect(response.contentType).toBe('application/problem+json')
    const body = JSON.parse(response.body)
    expect(body).toMatchObject({
      type: QUOTA_EXCEEDED_TYPE,
      status: 429,
      'violated-policies': ['gc1/1m'],
    })
    expect(body.title).toEqual(expect.any(String))
    expect(body.detail).toMatch(/^The limit is 1 request per 1 minute\. Retry in \d+ seconds?\.$/)
  })

  it.each<[string, Partial<RateLimitBaseOptions<Req>>, string, string]>([
    ['string', { message: 'slow down' }, 'text/plain; charset=utf-8', 'slow down'],
    [
      'object',
      { message: { error: 'slow' } },
      'application/json; charset=utf-8',
      '{"error":"slow"}',
    ],
    [
      'callback',
      { message: (_r, d) => `wait ${d.retryAfterMs > 0}` },
      'text/plain; charset=utf-8',
      'wait true',
    ],
    [
      'async callback',
      { message: async () => ({ a: 1 }) },
      'application/json; charset=utf-8',
      '{"a":1}',
    ],
    ['statusCode', { statusCode: 503, message: 'busy' }, 'text/plain; charset=utf-8', 'busy'],
  ])('message: %s', async (_name, options, contentType, body) => {
    const { rl, check } = await deniedCheck(options)
    expect(await limitedResponse(rl, req, check)).toEqual({
      status: options.statusCode ?? 429,
      contentType,
      body,
    })
  })

  it('a message callback returning nonsense names `message`', async () => {
    const { rl, check } = await deniedCheck({ message: () => undefined as unknown as string })
    expect((await errorOf(limitedResponse(rl, req, check))).message).toMatch(
      /^rateLimit option `message` returned undefined/,
    )
  })
})

describe('refunds', () => {
  const make = async (options: Partial<RateLimitBaseOptions<Req>>) => {
    const store = countingStore()
    const rl = resolve({ limit: 5, window: '1m', store, ...options })
    const check = (await checkRequest(rl, req)) as RateLimitCheck
    return { store, rl, check }
  }
  const tick = () => new Promise((r) => setImmediate(r))

  it.each<[string, Partial<RateLimitBaseOptions<Req>>, number | undefined, number]>([
    ['success refunded', { skipSuccessfulRequests: true }, 200, 1],
    ['failure kept', { skipSuccessfulRequests: true }, 500, 0],
    ['failure refunded', { skipFailedRequests: true }, 404, 1],
    ['success kept', { skipFailedRequests: true }, 302, 0],
    ['abort stays counted under skipFailedRequests', { skipFailedRequests: true }, undefined, 0],
    ['abort not a success', { skipSuccessfulRequests: true }, undefined, 0],
    ['abort refunded under skipAbortedRequests', { skipAbortedRequests: true }, undefined, 1],
    ['a 500 not refunded under skipAbortedRequests', { skipAbortedRequests: true }, 500, 0],
  ])('%s', async (_name, options, status, refunds) => {
    const { store, rl, check } = await make(options)
    const settle = refundOnce(rl, check)
    settle?.(status)
    settle?.(status)
    settle?.(200)
    await tick()
    expect(store.refunds).toBe(refunds)
  })

  it('nothing to refund without the options', async () => {
    const { rl, check } = await make({})
    expect(refundOnce(rl, check)).toBeUndefined()
  })

  it('refundWhenDone refunds once when both finish and close fire', async () => {
    const { store, rl, check } = await make({ skipSuccessfulRequests: true })
    const res = Object.assign(new EventEmitter(), { statusCode: 200, writableFinished: false })
    refundWhenDone(rl, check, res)
    res.writableFinished = true
    res.emit('finish')
    res.emit('close')
    await tick()
    expect(store.refunds).toBe(1)
    const after = await checkRequest(rl, req)
    expect(after?.decision.remaining).toBe(4)
  })

  it('refundWhenDone treats close before finish as aborted', async () => {
    for (const [options, refunds] of [
      [{ skipFailedRequests: true }, 0],
      [{ skipAbortedRequests: true }, 1],
    ] as const) {
      const { store, rl, check } = await make(options)
      const res = Object.assign(new EventEmitter(), { statusCode: 200, writableFinished: false })
      refundWhenDone(rl, check, res)
      res.emit('close')
      await tick()
      expect(store.refunds).toBe(refunds)
    }
  })

  it('refundWhenDone trusts finish when writableFinished lags (light-my-request)', async () => {
    const { store, rl, check } = await make({ skipFailedRequests: true })
    const res = Object.assign(new EventEmitter(), { statusCode: 200, writableFinished: false })
    refundWhenDone(rl, check, res)
    res.emit('finish')
    res.emit('close')
    await tick()
    expect(store.refunds).toBe(0)
  })
})

describe('applyHeaders', () => {
  const target = (headersSent: boolean) => {
    const headers = new Map<string, HeaderValue>([['ratelimit', '"a";r=1;t=1']])
    return {
      headers,
      headersSent,
      getHeader: (n: string) => headers.get(n.toLowerCase()),
      setHeader: (n: string, v: string) => headers.set(n.toLowerCase(), v),
    }
  }

  it('merges into what the response holds', () => {
    const t = target(false)
    expect(applyHeaders(t, [['RateLimit', '"b";r=2;t=2']])).toBe(true)
    expect(t.headers.get('ratelimit')).toBe('"a";r=1;t=1, "b";r=2;t=2')
  })

  it('writes nothing once the response has started', () => {
    const t = target(true)
    expect(applyHeaders(t, [['RateLimit', '"b";r=2;t=2']])).toBe(false)
    expect(t.headers.get('ratelimit')).toBe('"a";r=1;t=1')
  })
})

describe('beginCheck', () => {
  it('answers in the same turn with synchronous callbacks and a MemoryStore', () => {
    const rl = resolve({ limit: 2, window: '1m', skip: () => false, cost: () => 1 })
    const first = beginCheck(rl, req)
    expect(isThenable(first)).toBe(false)
    expect((first as RateLimitCheck).decision).toMatchObject({ allowed: true, remaining: 1 })
    beginCheck(rl, req)
    expect((beginCheck(rl, req) as RateLimitCheck).decision.allowed).toBe(false)
    expect(beginCheck(resolve({ limit: 2, window: '1m', skip: () => true }), req)).toBeUndefined()
  })

  it('returns a promise when a callback or the store is asynchronous', async () => {
    const asyncKey = resolve({ limit: 2, window: '1m', key: async () => 'k' })
    const pending = beginCheck(asyncKey, req)
    expect(isThenable(pending)).toBe(true)
    expect(((await pending) as RateLimitCheck).key).toBe('k')
    const storeBacked = resolve({ limit: 2, window: '1m', store: countingStore() })
    const viaStore = beginCheck(storeBacked, req)
    expect(isThenable(viaStore)).toBe(true)
    expect(((await viaStore) as RateLimitCheck).decision.remaining).toBe(1)
  })

  it('throws a synchronous callback failure at once, naming the option', () => {
    const rl = resolve({
      limit: 2,
      window: '1m',
      key: () => {
        throw new Error('no user')
      },
    })
    expect(() => beginCheck(rl, req)).toThrow(/rateLimit option `key` threw: no user/)
    const badCost = resolve({ limit: 2, window: '1m', cost: () => 3 })
    expect(() => beginCheck(badCost, req)).toThrow(/`cost` returned number 3/)
  })

  it('rejects, naming the option, when an asynchronous callback rejects', async () => {
    const rl = resolve({ limit: 2, window: '1m', skip: async () => Promise.reject(new Error('x')) })
    const error = await errorOf(Promise.resolve(beginCheck(rl, req)))
    expect(error.message).toMatch(/rateLimit option `skip` threw: x/)
  })
})

describe('deny', () => {
  const bans = new Map<string, { reason: string }>([['10.0.0.1', { reason: 'abuse' }]])
  const cases: [string, (r: Req) => unknown][] = [
    ["a Map's entry", (r) => bans.get(String(r.ip).replace('::ffff:', ''))],
    ['an object', () => ({ banned: 'yes' })],
    ['a string', () => 'abuse'],
    ['a promise of a row', async () => ({ id: 7, reason: 'abuse' })],
    ['true', () => true],
  ]

  it.each(cases)('refuses on a truthy value, as skip accepts one: %s', async (_, deny) => {
    const store = countingStore()
    const check = await checkAny(resolve({ limit: 5, window: '1m', store, deny }), req)
    expect(check?.denied).toBe(true)
    expect(store.keys).toEqual([])
  })

  it.each<[string, unknown]>([
    ['undefined', undefined],
    ['null', null],
    ['false', false],
    ['0', 0],
    ["''", ''],
  ])('lets a falsy value through to be counted: %s', async (_, value) => {
    const store = countingStore()
    const rl = resolve({ limit: 5, window: '1m', store, deny: () => value })
    const check = await checkAny(rl, { ip: '10.0.0.2' })
    expect(check?.denied).toBeUndefined()
    expect(store.keys).toEqual(['10.0.0.2'])
    const later = await checkAny(resolve({ limit: 5, window: '1m', deny: async () => value }), req)
    expect(later?.denied).toBeUndefined()
  })
})

describe('withCheck', () => {
  const onError = (error: unknown) => `error: ${(error as Error).message}`
  const onCheck = (check: CheckResult) =>
    check?.denied ? 'denied' : `remaining ${check?.decision.remaining}`

  it('hands a synchronous check or failure on in the same turn', () => {
    expect(withCheck(resolve({ limit: 2, window: '1m' }), req, '', onCheck, onError)).toBe(
      'remaining 1',
    )
    const throwing = resolve({
      limit: 2,
      window: '1m',
      key: () => {
        throw new Error('no user')
      },
    })
    expect(withCheck(throwing, req, '', onCheck, onError)).toMatch(/^error: .*no user/)
  })

  it('hands an asynchronous check or failure on through a promise', async () => {
    const later = withCheck(
      resolve({ limit: 2, window: '1m', key: async () => 'k' }),
      req,
      '',
      onCheck,
      onError,
    )
    expect(isThenable(later)).toBe(true)
    expect(await later).toBe('remaining 1')
    const rejecting = resolve({
      limit: 2,
      window: '1m',
      key: async () => Promise.reject(new Error('x')),
    })
    expect(await withCheck(rejecting, req, '', onCheck, onError)).toMatch(/^error: .*threw: x/)
  })
})

describe('leases and reserved slots', () => {
  // A MemoryStore counting the give-backs: releases and refunds.
  function givingBack() {
    const store = new MemoryStore()
    return { store, counts: countGiveBacks(store) }
  }
  const response = (closed = false) =>
    Object.assign(new EventEmitter(), { statusCode: 200, writableFinished: false, closed })
  const tick = () => new Promise((r) => setImmediate(r))

  it('a concurrency check knows it holds a lease; a rate-only one does not', async () => {
    const lease = await checkRequest(
      resolve({ algorithm: 'concurrency', limit: 1, window: '1m' }),
      req,
    )
    expect(lease?.leases).toBe(true)
    expect((await checkRequest(resolve({ limit: 1, window: '1m' }), req))?.leases).toBe(false)
    // and refundOnce arms nothing for a rate-only limiter without the skip options
    const rl = resolve({ limit: 1, window: '1m' })
    expect(refundOnce(rl, (await checkRequest(rl, req)) as RateLimitCheck)).toBeUndefined()
  })

  it.each([
    ['finish then close', ['finish', 'close']],
    ['close alone (the client left)', ['close']],
  ])('releases the lease once: %s', async (_name, events) => {
    const { store, counts } = givingBack()
    const rl = resolve({ algorithm: 'concurrency', limit: 1, window: '1m', store })
    const check = (await checkRequest(rl, req)) as RateLimitCheck
    const res = response()
    refundWhenDone(rl, check, res)
    for (const event of events) res.emit(event)
    await tick()
    expect(counts).toEqual({ releases: 1, refunds: 0 })
    expect((await checkRequest(rl, req))?.decision.allowed).toBe(true)
  })

  it('a response closed before the check settled releases at once', async () => {
    const { store, counts } = givingBack()
    const rl = resolve({ algorithm: 'concurrency', limit: 1, window: '1m', store })
    const check = (await checkRequest(rl, req)) as RateLimitCheck
    refundWhenDone(rl, check, response(true))
    await tick()
    expect(counts).toEqual({ releases: 1, refunds: 0 })
  })

  it('a refunded request gives its lease back with the refund, not twice', async () => {
    const { store, counts } = givingBack()
    const rl = resolve({
      algorithm: 'concurrency',
      limit: 1,
      window: '1m',
      store,
      skipFailedRequests: true,
    })
    const check = (await checkRequest(rl, req)) as RateLimitCheck
    const res = Object.assign(response(), { statusCode: 500 })
    refundWhenDone(rl, check, res)
    res.emit('finish')
    res.emit('close')
    await tick()
    expect(counts).toEqual({ releases: 0, refunds: 1 })
    expect((await checkRequest(rl, req))?.decision.allowed).toBe(true)
  })

  describe('whenDue', () => {
    const waiting = async (store: Store) => {
      const rl = resolve({
        algorithm: 'gcra',
        limit: 10,
        window: '1s',
        burst: 1,
        maxDelay: '1s',
        store,
      })
      await checkRequest(rl, req)
      const check = (await checkRequest(rl, req)) as RateLimitCheck
      expect(check.decision.delayMs).toBeGreaterThan(50)
      return { rl, check }
    }

    it('goes on at once without a delay', async () => {
      const rl = resolve({ limit: 1, window: '1m' })
      const check = (await checkRequest(rl, req)) as RateLimitCheck
      expect(whenDue(rl, check, response(), () => 'went')).toBe('went')
    })

    it('goes on after the delay, then arms what the request owes', async () => {
      const { store, counts } = givingBack()
      const { rl, check } = await waiting(store)
      const res = response()
      const started = performance.now()
      await new Promise<void>((done) => whenDue(rl, check, res, done))
      expect(performance.now() - started).toBeGreaterThanOrEqual(check.decision.delayMs - 2)
      expect(res.listenerCount('close')).toBe(0)
      res.emit('close')
      await tick()
      // a rate-only limiter without skip options owes nothing
      expect(counts).toEqual({ releases: 0, refunds: 0 })
    })

    it('a client gone while waiting: refunded once, never goes on, `gone` runs', async () => {
      const { store, counts } = givingBack()
      const { rl, check } = await waiting(store)
      const res = response()
      let went = false
      let gone = 0
      whenDue(
        rl,
        check,
        res,
        () => {
          went = true
        },
        () => gone++,
      )
      res.emit('close')
      await new Promise((r) => setTimeout(r, check.decision.delayMs + 20))
      expect({ went, gone, ...counts }).toEqual({ went: false, gone: 1, releases: 0, refunds: 1 })
    })

    it('a response closed already: refunded at once, never goes on', async () => {
      const { store, counts } = givingBack()
      const { rl, check } = await waiting(store)
      let went = false
      whenDue(rl, check, response(true), () => {
        went = true
      })
      await tick()
      expect({ went, ...counts }).toEqual({ went: false, releases: 0, refunds: 1 })
    })
  })
})

describe('a shedder admission under maxDelay', () => {
  // a shedder that records how each admission ends
  const recording = () => {
    const ends: unknown[] = []
    const shed = {
      admit: () => ({ admitted: true as const, done: (options?: unknown) => ends.push(options) }),
    }
    return { ends, shed: shed as never }
  }

  it('ends with the wait taken off its sample, or ignored when it never ran', async () => {
    const { ends, shed } = recording()
    const rl = resolve({ algorithm: 'gcra', limit: 1, window: '1s', maxDelay: '1s', shed })
    const first = (await checkRequest(rl, req)) as RateLimitCheck
    first.over?.(200)
    const waited = (await checkRequest(rl, req)) as RateLimitCheck
    expect(waited.decision.delayMs).toBeGreaterThan(900)
    waited.over?.(200)
    const gaveUp = (await checkRequest(rl, req)) as RateLimitCheck
    // a client gone while waiting: the reservation is given back, the request never ran
    await giveBackReservation(gaveUp)
    // (before: the wait counted as service time, and a given-up wait as a sample)
    expect(ends).toEqual([undefined, { waitedMs: waited.decision.delayMs }, { ignore: true }])
  })
})
