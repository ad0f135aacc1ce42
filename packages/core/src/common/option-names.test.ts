import { afterEach, describe, expect, it, vi } from 'vitest'
import type { LimitSet } from '../http/limit-sets.js'
import { resolveRateLimitOptions } from '../http/options.js'
import { createLimiter } from '../limiter/create-limiter.js'
import type { Store } from '../stores/store.js'
import { resetDurationWarnings } from './duration.js'
import { editDistance, suggestOption } from './option-names.js'

const adapter = { ip: () => '127.0.0.1' }
const resolve = (options: object) => resolveRateLimitOptions(options as never, adapter)

describe('a misspelt option gets a suggestion', () => {
  it.each([
    ['algoritm', 'algorithm'],
    ['skipSuccessfulRequest', 'skipSuccessfulRequests'],
    ['skipfailedrequests', 'skipFailedRequests'],
    ['failuremode', 'failureMode'],
    ['blockCache', 'blockedCache'],
    ['timeWindow', 'window'],
    ['max', 'limit'],
    ['keyGenerator', 'key'],
    ['Limit', 'limit'],
    ['delayMs', 'maxDelay'],
    ['maxDelayMs', 'maxDelay'],
    ['execEvenly', 'maxDelay'],
    ['maxdelay', 'maxDelay'],
    ['id', 'key'],
    ['getTracker', 'key'],
    ['identifier', 'name'],
    ['errorMessage', 'message'],
    ['disableHeader', 'headers'],
    ['db', 'redis'],
    ['groupId', 'name'],
    ['addHeadersOnExceeding', 'headers'],
  ])('%s -> %s', (typo, meant) => {
    expect(() => resolve({ limit: 5, window: '1m', [typo]: 1 })).toThrow(
      `is not an option (did you mean \`${meant}\`?`,
    )
  })

  // (before: `reservoir` suggested `reserve`, the concurrency fleet reserve; the others nothing)
  it.each([
    [
      'reservoir',
      /`reservoir`: is not an option \(Bottleneck's `reservoir` is a rate here: `limit` per `window`/,
    ],
    ['maxConcurrent', /`maxConcurrent`: .*algorithm: 'concurrency'/],
    ['minTime', /`minTime`: .*limit: 1, window: <minTime>, burst: 1/],
    ['limiter', /`limiter`: .*algorithm: 'sliding-window', limit: 10, window: '10s'/],
    // @fastify/rate-limit's (before: no hint; `onExceeded` said `onLimited`, which answers, where
    // onExceeded only notifies)
    ['onExceeded', /`onExceeded`: .*is a notification; `onLimited` answers .*`limiter:decision`/],
    ['onExceeding', /`onExceeding`: .*`limiter:decision` diagnostics channel/],
    ['ban', /`ban`: .*`limiter\.block\(key, duration\)`/],
    ['continueExceeding', /`continueExceeding`: .*`limiter\.penalize\(key\)`/],
    ['exponentialBackoff', /`exponentialBackoff`: .*`limiter\.penalize\(key, cost\)`/],
    ['cache', /`cache`: .*`store: new MemoryStore\(\{ maxKeys \}\)`/],
    // express-rate-limit's, koa-ratelimit's, rate-limiter-flexible's, @nestjs/throttler's (before:
    // `handler` and `onLimitReached` said only `onLimited`; the others nothing)
    ['handler', /`handler`: .*is `onLimited` here, called with the Decision where they pass/],
    ['onLimitReached', /`onLimitReached`: .*is a notification; `onLimited` answers/],
    ['requestWasSuccessful', /`requestWasSuccessful`: .*below 400 counts as a success/],
    ['validate', /`validate`: is not an option \(there is no such option/],
    ['throw', /`throw`: .*`ctx\.throw\(429\)`/],
    ['total', /`total`: .*`headers: 'legacy'`/],
    ['inMemoryBlockOnConsumed', /`inMemoryBlockOnConsumed`: .*`blockedCache`/],
    ['storeType', /`storeType`: .*`redis` takes an ioredis client/],
    ['throttlers', /`throttlers`: .*`limits: \[\{ name, limit, window \}\]`/],
    ['default', /`default`: .*`\{ limit, window \}` here/],
    ['ignoreUserAgents', /`ignoreUserAgents`: .*user-agent/],
    ['generateKey', /`generateKey`: .*is `key` here/],
  ])('a peer option that is several here says which: %s', (name, message) => {
    expect(() => createLimiter({ limit: 5, window: '1m', [name]: 1 } as never)).toThrow(message)
  })

  it.each([
    ['1 minute', "'1m'"],
    ['2 hours', "'2h'"],
    ['1.5 mins', "'1.5m'"],
    ['30 seconds', "'30s'"],
  ])('a window in words (%s) is refused, suggesting %s', (window, meant) => {
    expect(() => createLimiter({ limit: 5, window } as never)).toThrow(`(did you mean ${meant}?)`)
  })

  it('createLimiter refuses unknown names too', () => {
    expect(() => createLimiter({ limit: 5, window: '1m', algoritm: 'gcra' } as never)).toThrow(
      /`algoritm`: is not an option \(did you mean `algorithm`\?\)/,
    )
  })

  it('a name far from every option gets no guess', () => {
    expect(suggestOption('zebra', ['limit', 'window'])).toBeUndefined()
    expect(() => resolve({ limit: 5, window: '1m', zebra: 1 })).toThrow(
      /`zebra`: is not an option, got 1/,
    )
  })

  it('edit distance counts a swap of neighbours as one', () => {
    expect(editDistance('limti', 'limit')).toBe(1)
    expect(editDistance('window', 'window')).toBe(0)
    expect(editDistance('', 'abc')).toBe(3)
  })
})

// The message for `{ limit: 5, [name]: value }`, from the adapters' options or createLimiter's.
function refusal(make: (options: object) => unknown, name: string, value: unknown): string {
  try {
    make({ limit: 5, window: '1m', [name]: value })
  } catch (error) {
    return (error as Error).message
  }
  return 'accepted'
}
const limiterOf = (options: object) => createLimiter(options as never)

describe("a peer's duration option says the peer's unit and the replacement", () => {
  it.each([
    [
      'duration',
      60,
      "(did you mean `window`? rate-limiter-flexible's `duration` is in seconds: use `window: '60s'`; koa-ratelimit's is in milliseconds: use `window: '60ms'`)",
    ],
    [
      'duration',
      3_600_000,
      "rate-limiter-flexible's `duration` is in seconds: use `window: '3600000s'`; koa-ratelimit's is in milliseconds: use `window: '1h'`",
    ],
    [
      'ttl',
      60_000,
      "(did you mean `window`? @nestjs/throttler's `ttl` is in milliseconds (v5 and later): use `window: '1m'`; in seconds before v5: use `window: '60000s'`)",
    ],
    [
      'ttl',
      60,
      "@nestjs/throttler's `ttl` is in milliseconds (v5 and later): use `window: '60ms'`; in seconds before v5: use `window: '60s'`",
    ],
    [
      'windowMs',
      900_000,
      "(did you mean `window`? express-rate-limit's `windowMs` is in milliseconds: use `window: '15m'`)",
    ],
    [
      'timeWindow',
      '1 minute',
      "(did you mean `window`? @fastify/rate-limit's `timeWindow` is milliseconds or a string such as '1 minute': use `window: '1m'`)",
    ],
    ['timeWindow', 1500, "use `window: '1500ms'`"],
    ['timeWindow', '2 hours', "use `window: '2h'`"],
    ['timeWindow', 'soon', "use `window: '1m'`"],
    [
      'blockDuration',
      900,
      "rate-limiter-flexible's `blockDuration` is in seconds: use `limiter.block(key, '900s')`; @nestjs/throttler's is in milliseconds: use `limiter.block(key, '900ms')`",
    ],
    [
      'duration',
      'x',
      "use `window: '60s'`; koa-ratelimit's is in milliseconds: use `window: '1m'`",
    ],
  ])('%s: %s', (name, value, hint) => {
    expect(refusal(resolve, name, value)).toContain(hint)
    expect(refusal(limiterOf, name, value)).toContain(hint)
  })

  it('blockDuration says there is no block option, and what to call instead', () => {
    expect(refusal(resolve, 'blockDuration', 60)).toMatch(
      /`blockDuration`: is not an option \(did you mean `limiter\.block`\? there is no block option: call `limiter\.block\(key, duration\)`/,
    )
  })

  it('a peer name inside limits[] gets the same hint', () => {
    expect(refusal((o) => createLimiter({ limits: [o] } as never), 'duration', 60)).toContain(
      "`limits[0].duration`: is not an option (did you mean `window`? rate-limiter-flexible's",
    )
  })
})

describe('a bare-number window or block under a second warns once', () => {
  afterEach(() => resetDurationWarnings())

  const warningsOf = async (body: () => unknown): Promise<Array<Error & { code?: string }>> => {
    const saved = process.listeners('warning')
    process.removeAllListeners('warning')
    const warnings: Array<Error & { code?: string }> = []
    const collect = (w: Error) => warnings.push(w)
    process.on('warning', collect)
    try {
      await body()
      await new Promise((r) => setImmediate(r))
      return warnings
    } finally {
      process.off('warning', collect)
      for (const listener of saved) process.on('warning', listener)
    }
  }

  it('window: 60 warns once, suggesting the string form', async () => {
    resetDurationWarnings()
    const warnings = await warningsOf(() => {
      createLimiter({ limit: 5, window: 60 })
      createLimiter({ limit: 5, window: 60 })
    })
    expect(warnings.map((w) => w.code)).toEqual(['LIMITER_SMALL_WINDOW'])
    expect(warnings[0]?.name).toBe('LimiterWarning')
    expect(warnings[0]?.message).toContain(
      "window: 60 is 60 ms; if you meant 60 seconds write '60s'",
    )
  })

  // Regression: one warning per process hid the rest of a migration's tiers (rate-limiter-
  // flexible's duration: 1, 60, 86400 as window: only 1 was named; 86400 stayed 86.4 s)
  it('each value warns once: every tier of a migration is named', async () => {
    resetDurationWarnings()
    const warnings = await warningsOf(() => {
      for (const window of [1, 60, 86400, 60]) createLimiter({ limit: 5, window })
    })
    expect(warnings.map((w) => w.message.slice(0, w.message.indexOf(' is ')))).toEqual([
      'window: 1',
      'window: 60',
      'window: 86400',
    ])
  })

  it("window: 3600 or 86400 (an hour, a day, in seconds) warns, suggesting '1h', '1d'", async () => {
    resetDurationWarnings()
    const warnings = await warningsOf(async () => {
      createLimiter({ limit: 5, window: 3600 })
      await createLimiter({ limit: 5, window: '1m' }).block('a', 86_400)
    })
    // (before: only numbers under 1000 warned, so these became 3.6 s and 86.4 s silently)
    expect(warnings.map((w) => w.message)).toEqual([
      expect.stringContaining(
        "window: 3600 is 3600 ms (3.6 s); if you meant 3600 seconds write '1h'",
      ),
      expect.stringContaining(
        "limiter.block(key, 86400) is 86400 ms (86.4 s); if you meant 86400 seconds write '1d'",
      ),
    ])
  })

  it('strings, and numbers that read as ms, never warn', async () => {
    resetDurationWarnings()
    const warnings = await warningsOf(async () => {
      createLimiter({ limit: 5, window: '500ms' })
      createLimiter({ limit: 5, window: '60s' })
      createLimiter({ limit: 5, window: 1000 })
      createLimiter({ limit: 5, window: 60_000 })
      createLimiter({ limit: 5, window: 1001 })
      createLimiter({ limits: [{ limit: 5, window: '10ms' }] })
      await createLimiter({ limit: 5, window: '1m' }).block('a', '500ms')
      await createLimiter({ limit: 5, window: '1m' }).block('a', 60_000)
    })
    expect(warnings).toEqual([])
  })

  it("limiter.block(key, 900) warns once, apart from the window's warning", async () => {
    resetDurationWarnings()
    const limiter = createLimiter({ limit: 5, window: '1m' })
    const warnings = await warningsOf(async () => {
      createLimiter({ limit: 5, window: 60 })
      await limiter.block('a', 900)
      await limiter.block('b', 900)
    })
    expect(warnings.map((w) => w.code)).toEqual(['LIMITER_SMALL_WINDOW', 'LIMITER_SMALL_WINDOW'])
    expect(warnings[1]?.message).toContain(
      "limiter.block(key, 900) is 900 ms; if you meant 900 seconds write '900s'",
    )
    // and the block is 900 ms, as written
    expect((await limiter.consume('a')).retryAfterMs).toBeLessThanOrEqual(900)
  })

  // Regression: `retryAfter: 10` (seconds, as @fastify/under-pressure counts) became 10 ms unsaid.
  it('retryAfter: 10 warns, naming the option; strings and a second or more do not', async () => {
    resetDurationWarnings()
    const concurrency = { algorithm: 'concurrency', limit: 5, window: '1m' } as const
    const warnings = await warningsOf(() => {
      createLimiter({ ...concurrency, retryAfter: '10ms' })
      createLimiter({ ...concurrency, retryAfter: 1000 })
      createLimiter({ ...concurrency, retryAfter: 10 })
      resolve({ ...concurrency, retryAfter: 10 })
    })
    expect(warnings.map((w) => w.code)).toEqual(['LIMITER_SMALL_WINDOW'])
    expect(warnings[0]?.message).toContain(
      "retryAfter: 10 is 10 ms; if you meant 10 seconds write '10s' (a bare number is milliseconds here; @fastify/under-pressure and the Retry-After header count seconds)",
    )
  })
})

describe('nested option objects refuse unknown names, as `acquire` does', () => {
  // Regression: `circuitBreaker: { threshold, cooldown }` and `blockedCache: { maxkeys }` were
  // accepted, leaving the defaults in force.
  it.each([
    ['circuitBreaker', 'threshold', 'failureThreshold'],
    ['circuitBreaker', 'cooldown', 'coolDown'],
    ['circuitBreaker', 'resetTimeout', 'coolDown'],
    ['blockedCache', 'maxkeys', 'maxKeys'],
    ['blockedCache', 'max', 'maxKeys'],
    ['blockedCache', 'maxms', 'maxMs'],
  ])('%s.%s -> %s, in createLimiter and the adapters', (option, name, meant) => {
    const expected = `Invalid \`${option}.${name}\`: is not an option (did you mean \`${meant}\`?)`
    const nested = { [option]: { [name]: 5 } }
    expect(refusal((o) => createLimiter(o as never), option, nested[option])).toContain(expected)
    expect(refusal(resolve, option, nested[option])).toContain(expected)
  })

  it("the limiter's peer names do not apply inside them", () => {
    expect(refusal(resolve, 'circuitBreaker', { points: 1 })).toBe(
      'Invalid `circuitBreaker.points`: is not an option, got 1.',
    )
  })

  it('an array is not an object of options', () => {
    expect(() => createLimiter({ limit: 5, window: '1m', blockedCache: [] as never })).toThrow(
      /`blockedCache`: expected an object, got an array/,
    )
  })

  it('their own names are still taken', () => {
    expect(() =>
      createLimiter({
        limit: 5,
        window: '1m',
        circuitBreaker: { failureThreshold: 5, coolDown: '2s' },
        blockedCache: { maxKeys: 100, maxMs: 500 },
      }),
    ).not.toThrow()
  })
})

describe('options come from the object given', () => {
  it.each(['skip', 'key', 'limit', 'failureMode', 'blockedCache'])(
    'a polluted Object.prototype.%s sets nothing',
    async (name) => {
      const proto = Object.prototype as Record<string, unknown>
      proto[name] = name === 'skip' ? () => true : name === 'limit' ? 1_000_000 : 'polluted'
      try {
        const rl = resolve({ limit: 1, window: '1m' })
        expect(rl.skip).toBeUndefined()
        expect((rl.limits as LimitSet).limiter.policy.limit).toBe(1)
        const limiter = createLimiter({ limit: 1, window: '1m' })
        expect((await limiter.consume('a')).allowed).toBe(true)
        expect((await limiter.consume('a')).allowed).toBe(false)
      } finally {
        delete proto[name]
      }
    },
  )

  it('a polluted nested option (circuitBreaker.failureThreshold) sets nothing', () => {
    const proto = Object.prototype as Record<string, unknown>
    proto.failureThreshold = 'x'
    proto.maxKeys = -1
    try {
      expect(() =>
        createLimiter({ limit: 1, window: '1m', circuitBreaker: {}, blockedCache: {} }),
      ).not.toThrow()
    } finally {
      delete proto.failureThreshold
      delete proto.maxKeys
    }
  })

  it('a polluted Object.prototype.onError hears no store failure', async () => {
    const heard: unknown[] = []
    const proto = Object.prototype as Record<string, unknown>
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    // a remote store that fails every call: the limiter fails open and reports each failure
    const down = () => Promise.reject(new Error('down'))
    const store = { consume: down, refund: down, reset: down } as unknown as Store
    proto.onError = (error: unknown) => heard.push(error)
    try {
      const limiter = createLimiter({ limit: 1, window: '1m', store, circuitBreaker: false })
      expect((await limiter.consume('a')).source).toBe('fail-open')
      expect(heard).toEqual([])
      // the default reporter took it instead
      expect(warn).toHaveBeenCalledTimes(1)
    } finally {
      delete proto.onError
      warn.mockRestore()
    }
  })

  it.each(['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'])(
    '%s is a plain unknown name, with no nonsense hint',
    (name) => {
      const options = JSON.parse(`{"limit": 5, "window": 1000, "${name}": {"skip": 1}}`)
      let message = ''
      try {
        resolve(options)
      } catch (error) {
        message = (error as Error).message
      }
      expect(message).toContain(`\`${name}\`: is not an option`)
      expect(message).not.toContain('[object')
      expect(message).not.toContain('function')
    },
  )
})
