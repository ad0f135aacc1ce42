// Regression: a store's options were never name-checked, so rate-limit-redis's `prefix` on
// `new RedisStore({ client, prefix })` was ignored and two apps on one Redis shared counters.
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { createLimiter } from '../limiter/create-limiter.js'
import { MemoryStore } from './memory-store.js'
import { RedisStore } from './redis-store.js'

// A real client that never connects: the options are refused before any command.
const client = new Redis({ lazyConnect: true })
afterAll(() => client.disconnect())

const refusal = (make: () => unknown): string => {
  try {
    const made = make()
    if (made instanceof MemoryStore) void made.close()
  } catch (error) {
    expect(error).toBeInstanceOf(RangeError)
    return (error as Error).message
  }
  return 'accepted'
}

describe('new RedisStore refuses names it does not take', () => {
  it("rate-limit-redis's `prefix`: set it on the limiter, which takes it", () => {
    const message = refusal(() => new RedisStore({ client, prefix: 'appB:' } as never))
    expect(message).toMatch(/^Invalid `prefix`: is not an option \(the store takes no prefix: /)
    expect(message).toContain('set `prefix` on the limiter (`createLimiter({ prefix, store })`)')
    // ...where it is an option
    const store = new RedisStore({ client })
    expect(createLimiter({ limit: 1, window: '1m', store, prefix: 'appB:' }).prefix).toBe('appB:')
  })

  it.each([
    ['sendCommand', 'pass the Redis client itself as `client`'],
    ['storeClient', 'did you mean `client`?'],
    ['redis', 'did you mean `client`?'],
    ['keyPrefix', "rate-limiter-flexible's `keyPrefix` is the limiter's `prefix`"],
    ['nameSpace', "@fastify/rate-limit's `nameSpace` is the limiter's `prefix`"],
    [
      'resetExpiryOnChange',
      "there is no such option: each algorithm's script sets its keys' expiry",
    ],
    ['points', '`points` is `limit` here, which is an option of the limiter (`createLimiter`)'],
    ['duration', '`duration` is `window` here'],
    ['limit', '`limit` is an option of the limiter'],
    ['clinet', 'did you mean `client`?'],
  ])('%s', (name, hint) => {
    expect(refusal(() => new RedisStore({ client, [name]: 1 } as never))).toContain(
      `Invalid \`${name}\`: is not an option (${hint}`,
    )
  })

  it('batch: its names and its type are checked too', () => {
    expect(refusal(() => new RedisStore({ client, batch: { size: 8 } } as never))).toMatch(
      /^Invalid `batch\.size`: is not an option, got 8/,
    )
    expect(refusal(() => new RedisStore({ client, batch: { maxsize: 8 } } as never))).toContain(
      'did you mean `maxSize`?',
    )
    expect(() => new RedisStore({ client, batch: 8 } as never)).toThrow(
      /`batch`: expected an object \{ maxSize\? \} or false, got 8/,
    )
    expect(() => new RedisStore({ client, batch: { maxSize: 8 } })).not.toThrow()
    expect(() => new RedisStore({ client, batch: false })).not.toThrow()
    expect(() => new RedisStore({ client, batch: undefined })).not.toThrow()
  })
})

describe('new MemoryStore refuses names it does not take', () => {
  it.each([
    ['max', 'did you mean `maxKeys`?'],
    ['maxkeys', 'did you mean `maxKeys`?'],
    ['sweepInterval', 'did you mean `sweepIntervalMs`?'],
    ['checkperiod', "node-cache's `checkperiod` is in seconds"],
    ['prefix', 'the store takes no prefix: set `prefix` on the limiter'],
    ['points', '`points` is `limit` here'],
  ])('%s', (name, hint) => {
    expect(refusal(() => new MemoryStore({ [name]: 1000 } as never))).toContain(
      `Invalid \`${name}\`: is not an option (${hint}`,
    )
  })

  it('still takes its own options', async () => {
    const store = new MemoryStore({ maxKeys: 10, sweepIntervalMs: 1000 })
    await store.close()
  })
})
