// Core test setup: one private redis-server per test file, and an ioredis client on it.
import { Redis } from 'ioredis'
import { afterAll, beforeAll } from 'vitest'
import { type RedisProcess, startRedis } from '../../../../test-support/redis.js'

/** Starts a private Redis for this file; the returned object is filled in beforeAll. */
export function useRedis(): { server: RedisProcess; client: Redis } {
  const ctx = {} as { server: RedisProcess; client: Redis }
  beforeAll(async () => {
    ctx.server = await startRedis()
    ctx.client = new Redis(ctx.server.port, '127.0.0.1', { lazyConnect: false })
  })
  afterAll(async () => {
    ctx.client?.disconnect()
    await ctx.server?.stop()
  })
  return ctx
}
