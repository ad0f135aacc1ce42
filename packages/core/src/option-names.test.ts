import { describe, expect, it } from 'vitest'
import type { LimitSet } from './http/limit-sets.js'
import { resolveRateLimitOptions } from './http/options.js'
import { createLimiter } from './limiter.js'
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
  ])('%s -> %s', (typo, meant) => {
    expect(() => resolve({ limit: 5, window: '1m', [typo]: 1 })).toThrow(
      `is not an option (did you mean \`${meant}\`?)`,
    )
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
