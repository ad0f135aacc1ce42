// Test support: the contracts every adapter runs in full, opened the same way in each adapter's
// tests: on the embedded MemoryStore (adapter, several limits, concurrency and waiting), and on
// its test file's private redis-server (Redis, concurrency and waiting).
import { describeAdapterContract } from './adapter-contract.js'
import type { StoreLike } from './adapter-helpers.js'
import { type ConcurrencyBackend, describeConcurrencyContract } from './concurrency-contract.js'
import type { AdapterHarness } from './harness.js'
import { describeLimitsContract } from './limits-contract.js'
import { freePort } from './redis.js'
import { describeRedisContract } from './redis-contract.js'

/** The adapter, several-limits and concurrency contracts against `harness`, on `core`'s stores. */
export function describeMemoryContracts(
  harness: AdapterHarness,
  core: Pick<ConcurrencyBackend, 'createLimiter'> & { readonly store: () => StoreLike },
): void {
  describeAdapterContract('adapter contract', harness)
  describeLimitsContract('several limits', harness)
  describeConcurrencyContract('concurrency and waiting', harness, {
    store: core.store,
    createLimiter: core.createLimiter,
  })
}

/** A Redis client library as the tests use it: the file's client, and how to make one. */
export interface RedisBackend<C> {
  /** The test file's client (from `useRedis(connect)`). */
  readonly client: () => C
  /** A new client of the same library on 127.0.0.1:`port`. */
  readonly connect: (port: number) => C
  /** A RedisStore on `client`. */
  readonly store: (client: C) => StoreLike
}

/** The Redis contract against `harness` on `redis`: its client, store and an unreachable one. */
export function describeRedisOn<C>(harness: AdapterHarness, redis: RedisBackend<C>): void {
  describeRedisContract('adapter contract', harness, {
    client: redis.client,
    store: () => redis.store(redis.client()),
    unreachable: async () => {
      const port = await freePort()
      return { client: redis.connect(port), address: `127.0.0.1:${port}` }
    },
  })
}

/** The Redis contract, then concurrency and waiting, against `harness` on `redis`. */
export function describeRedisContracts<C>(
  harness: AdapterHarness,
  redis: RedisBackend<C> & Pick<ConcurrencyBackend, 'createLimiter'>,
): void {
  describeRedisOn(harness, redis)
  describeConcurrencyContract('concurrency and waiting', harness, {
    store: () => redis.store(redis.client()),
    batching: true,
    createLimiter: redis.createLimiter,
  })
}
