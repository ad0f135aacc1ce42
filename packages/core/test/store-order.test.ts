// A turn's calls reach Redis in the order they were made: a reset or a block issued right after
// an un-awaited consume of the same key must not overtake it (the consume waits in its batch
// until the end of the turn; a reset or block used to go at once).
import { describe, expect, it } from 'vitest'
import { ALGORITHMS, createLimiter, RedisStore, type RedisStoreClient } from '../src/index.js'
import { CLIENTS, withStandalone } from './setup/clients.js'
import { useRedis } from './setup/redis.js'

const redis = useRedis()
let unique = 0

describe.each(CLIENTS)('on $name', (factory) => {
  const withClient = (run: (client: RedisStoreClient) => Promise<void>) =>
    withStandalone(factory, redis.server.port, run)

  it.each(ALGORITHMS)('%s: a reset goes after the consumes made before it', (algorithm) =>
    withClient(async (client) => {
      const limiter = createLimiter({
        algorithm,
        limit: 5,
        window: '1m',
        prefix: `order${unique++}:`,
        store: new RedisStore({ client }),
        blockedCache: false,
      })
      await limiter.consume('warm') // the script is cached: no NOSCRIPT retry
      const consumed = [limiter.consume('k', 3), limiter.consume('k')]
      const reset = limiter.reset('k')
      expect((await Promise.all(consumed)).map((d) => d.allowed)).toEqual([true, true])
      await reset
      expect((await limiter.peek('k')).remaining).toBe(5)
    }),
  )

  it('a key with several limits: the reset goes after the consume', () =>
    withClient(async (client) => {
      const limiter = createLimiter({
        limits: [
          { limit: 3, window: '1s' },
          { limit: 10, window: '1h' },
        ],
        prefix: `order${unique++}:`,
        store: new RedisStore({ client }),
        blockedCache: false,
      })
      await limiter.consume('warm')
      const consumed = limiter.consume('k', 2)
      const reset = limiter.reset('k')
      expect((await consumed).allowed).toBe(true)
      await reset
      expect((await limiter.peek('k')).remaining).toBe(3)
    }))

  it('a block goes after the consume made before it, and refuses the next', () =>
    withClient(async (client) => {
      const limiter = createLimiter({
        limit: 5,
        window: '1m',
        prefix: `order${unique++}:`,
        store: new RedisStore({ client }),
        blockedCache: false,
      })
      await limiter.consume('warm')
      await limiter.block('warm', '1s') // the block script is cached too
      const before = limiter.consume('k')
      const blocked = limiter.block('k', '1m')
      expect((await before).allowed).toBe(true)
      await blocked
      const after = await limiter.consume('k')
      expect(after.allowed).toBe(false)
      expect(after.retryAfterMs).toBeGreaterThan(50_000)
    }))
})
