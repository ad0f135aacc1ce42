// Shutting down: limiter.close() and closeLimiters() wait for the releases and refunds in flight,
// so quitting the client right after leaves no lease in Redis; and a release or refund that fails
// is reported as one, not as a decision failing open.
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { freshPrefix } from '../../../test-support/adapter-helpers.js'
import {
  closeLimiters,
  createLimiter,
  type ErrorContext,
  type LimiterError,
  RedisStore,
} from '../src/index.js'
import { CLIENTS } from './setup/clients.js'
import { useRedis } from './setup/redis.js'

const redis = useRedis()

afterEach(() => {
  vi.restoreAllMocks()
})

describe.each(CLIENTS)('on $name', (factory) => {
  it('limiter.close() resolves once the releases in flight are done: no lease is left', async () => {
    const { client, close } = await factory.standalone(redis.server.port)
    const prefix = freshPrefix()
    const store = new RedisStore({ client })
    const limiter = createLimiter({
      algorithm: 'concurrency',
      limit: 5,
      window: '10s',
      store,
      prefix,
    })
    const decisions = await Promise.all([1, 2, 3].map((i) => limiter.consume(`k${i}`)))
    expect(decisions.every((d) => d.allowed)).toBe(true)
    expect(await redis.client.keys(`${prefix}*`)).toHaveLength(3)
    // as an adapter does when a response finishes: not awaited
    decisions.forEach((d, i) => void limiter.release(`k${i + 1}`, d))
    await limiter.close()
    await close()
    expect(await redis.client.keys(`${prefix}*`)).toEqual([])
  })

  it('closeLimiters() waits for every limiter: refunds and releases', async () => {
    const { client, close } = await factory.standalone(redis.server.port)
    const prefix = freshPrefix()
    const store = new RedisStore({ client })
    const rate = createLimiter({ limit: 3, window: '1m', store, prefix, name: 'rate' })
    const leases = createLimiter({
      algorithm: 'concurrency',
      limit: 3,
      window: '10s',
      store,
      prefix,
    })
    const counted = await rate.consume('a', 3)
    const held = await leases.consume('a')
    void rate.refund('a', 3, counted)
    void leases.release('a', held)
    await closeLimiters()
    await close()
    // the refund landed: the count is back to zero (the key deleted), and the lease is gone
    expect(await redis.client.keys(`${prefix}*`)).toEqual([])
  })
})

describe('a failed release or refund', () => {
  async function failing(algorithm: 'concurrency' | 'fixed-window', window: string) {
    const client = new Redis(redis.server.port, '127.0.0.1')
    const seen: ErrorContext[] = []
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    const store = new RedisStore({ client })
    const name = `wording-${algorithm}`
    const limiter = createLimiter({
      algorithm,
      limit: 2,
      window,
      store,
      name,
      prefix: freshPrefix(),
    })
    const spy = createLimiter({
      algorithm,
      limit: 2,
      window,
      store,
      prefix: freshPrefix(),
      onError: (_: LimiterError, context) => seen.push(context),
    })
    const [decision, other] = [await limiter.consume('k'), await spy.consume('k')]
    // the client quit under the limiter (the shutdown this warns about)
    await client.quit()
    // this limiter's lines only (a test before may leave a failure in flight)
    const lines = () =>
      warn.mock.calls.map((call) => String(call[0])).filter((line) => line.includes(`"${name}"`))
    return { limiter, spy, decision, other, lines, seen }
  }

  it('a release says the lease expires after its window, not that requests pass unlimited', async () => {
    const { limiter, spy, decision, other, lines, seen } = await failing('concurrency', '10s')
    await limiter.release('k', decision)
    await spy.release('k', other)
    expect(lines()).toHaveLength(1)
    const line = String(lines()[0])
    expect(line).toContain('release failed: the lease expires after its window (10 s)')
    expect(line).not.toContain('failing open')
    expect(line).not.toContain('unlimited')
    expect(seen.map((c) => c.operation)).toEqual(['release'])
    // a decision on the same limiter still says what failureMode does
    await limiter.consume('k')
    expect(lines()[1]).toContain('failing open: requests pass unlimited')
  })

  it('a refund says the cost stays counted until its window passes', async () => {
    const { limiter, spy, decision, other, lines, seen } = await failing('fixed-window', '15m')
    await limiter.refund('k', 1, decision)
    await spy.refund('k', 1, other)
    expect(lines()).toHaveLength(1)
    const line = String(lines()[0])
    expect(line).toContain('refund failed: the cost stays counted until its window passes (15 min)')
    expect(line).not.toContain('failing open')
    expect(seen.map((c) => c.operation)).toEqual(['refund'])
  })
})
