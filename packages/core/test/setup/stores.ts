// Core test setup: the stores a test runs over (`describe.each(storeCases(redis))`), in memory and
// on the file's private Redis (and Cluster), and a plain sleep.
import type { Cluster, Redis } from 'ioredis'
import { MemoryStore, RedisStore, type Store } from '../../src/index.js'

/** A store under test: its name, a factory of new ones, the Redis client behind them if any. */
export type StoreCase = [
  name: string,
  make: () => Store,
  client: (() => Redis | Cluster) | undefined,
]

/**
 * 'MemoryStore', 'RedisStore' on `redis` (from `useRedis()`) and, given `cluster` (from
 * `useCluster()`), 'RedisStore on a Cluster'. The clients are read when a store is made.
 */
export function storeCases(redis: { client: Redis }, cluster?: { client: Cluster }): StoreCase[] {
  const cases: StoreCase[] = [
    ['MemoryStore', () => new MemoryStore(), undefined],
    ['RedisStore', () => new RedisStore({ client: redis.client }), () => redis.client],
  ]
  if (cluster !== undefined)
    cases.push([
      'RedisStore on a Cluster',
      () => new RedisStore({ client: cluster.client }),
      () => cluster.client,
    ])
  return cases
}

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms))
