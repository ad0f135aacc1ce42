// consume's own `maxDelay`: a caller that waits less than the limiter allows is refused, reserving
// nothing, when its slot is further away, on every store and under several policies; the limiter's
// maxDelay still bounds it; bad values throw naming the option.
import { describe, expect, it } from 'vitest'
import { createLimiter, type Limiter, type Store } from '../src/index.js'
import { useRedis } from './setup/redis.js'
import { storeCases } from './setup/stores.js'

const redis = useRedis()
let unique = 0

// 10 a second, one at once, reservations up to 2 s ahead (one policy, or beside a daily bucket).
function waiting(store: Store, several: boolean): Limiter {
  const name = `cap${unique++}`
  const rate = { limit: 10, window: '1s', burst: 1 } as const
  return several
    ? createLimiter({
        limits: [
          { name: 'rate', algorithm: 'gcra', ...rate },
          { name: 'day', algorithm: 'token-bucket', limit: 1000, window: '1d' },
        ],
        maxDelay: '2s',
        store,
        name,
      })
    : createLimiter({ algorithm: 'gcra', ...rate, maxDelay: '2s', store, name })
}

describe.each(storeCases(redis))('%s', (_name, store) => {
  describe.each([
    ['one policy', false],
    ['several policies', true],
  ])('%s', (_what, several) => {
    it('refuses a slot further than its maxDelay, reserving nothing; admits one within it', async () => {
      const limiter = waiting(store(), several)
      const key = `k${unique}`
      expect((await limiter.consume(key)).delayMs).toBe(0)
      // the next slot is ~100 ms ahead
      const refused = await limiter.consume(key, 1, { maxDelay: 0 })
      expect(refused.allowed).toBe(false)
      expect(refused.retryAfterMs).toBeGreaterThan(0)
      expect(refused.retryAfterMs).toBeLessThanOrEqual(100)
      // nothing was reserved: 20 more such refusals leave the queue as it was
      for (let i = 0; i < 20; i++)
        expect((await limiter.consume(key, 1, { maxDelay: '10ms' })).allowed).toBe(false)
      const next = await limiter.consume(key, 1, { maxDelay: 150 })
      expect(next.allowed).toBe(true)
      expect(next.delayMs).toBeGreaterThan(0)
      expect(next.delayMs).toBeLessThanOrEqual(100)
    })

    it("the limiter's maxDelay still bounds a longer one", async () => {
      const limiter = waiting(store(), several)
      const key = `bound${unique}`
      // 21 slots: the last is ~2 s ahead, the one after beyond the limiter's 2 s
      for (let i = 0; i < 21; i++)
        expect((await limiter.consume(key, 1, { maxDelay: '1h' })).allowed).toBe(true)
      expect((await limiter.consume(key, 1, { maxDelay: '1h' })).allowed).toBe(false)
    })
  })
})

describe('bad values', () => {
  const limiter = createLimiter({ limit: 10, window: '1s', maxDelay: '1s' })
  it.each([-1, 2.5, Number.NaN, 'soon', null])('maxDelay %s throws naming it', async (value) => {
    await expect(limiter.consume('k', 1, { maxDelay: value as unknown as number })).rejects.toThrow(
      /maxDelay/,
    )
  })
  it('a fraction of a ms says 0 is allowed too (before: "at least 1")', async () => {
    await expect(limiter.consume('k', 1, { maxDelay: '1.5ms' })).rejects.toThrow(
      'Invalid `maxDelay`: must be a whole number of milliseconds, 0 or more',
    )
  })
  it('a limiter that does not wait ignores it', async () => {
    const plain = createLimiter({ limit: 1, window: '1s' })
    expect((await plain.consume('k', 1, { maxDelay: 0 })).allowed).toBe(true)
    expect((await plain.consume('k', 1, { maxDelay: '1s' })).allowed).toBe(false)
  })
})
