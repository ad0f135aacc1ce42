// Core test setup: one private redis-server per test file, and an ioredis client on it.
import { Redis } from 'ioredis'
import { useRedisServer } from '../../../../test-support/adapter-helpers.js'

/** Starts a private Redis for this file; `server` and `client` are there inside tests. */
export function useRedis() {
  return useRedisServer((port) => new Redis(port, '127.0.0.1', { lazyConnect: false }))
}
