// Test support: the shared contracts on another store (a Redis Cluster): every limiter of a
// harness on it, and a Cluster for one test file.
import { afterAll, beforeAll } from 'vitest'
import { freshPrefix, type StoreLike } from './adapter-helpers.js'
import type { AdapterHarness, ContractOptions } from './harness.js'
import { type RedisCluster, startCluster } from './redis.js'

/**
 * `harness` with every limiter on `store()` (a RedisStore on a Cluster, say) unless its options
 * name a store or `redis` of their own, and each under a fresh key prefix unless they name one:
 * the contracts written against a fresh MemoryStore per app, run on a shared store.
 */
export function onStore(harness: AdapterHarness, store: () => StoreLike): AdapterHarness {
  const fill = (options: ContractOptions): ContractOptions => ({
    ...options,
    ...(options.store === undefined && options.redis === undefined ? { store: store() } : {}),
    ...(options.prefix === undefined ? { prefix: freshPrefix() } : {}),
  })
  return {
    ...harness,
    app: (options) => harness.app(fill(options)),
    listen: (options) => harness.listen(fill(options)),
    // (the contracts' own `harness.store()` cases stay on the harness's MemoryStore: they count
    // store calls, which a Redis store's cache of blocked keys answers in part)
  }
}

/**
 * A local Redis Cluster (3 masters, no replicas) for one test file, and a client of it made by
 * `connect` from its startup nodes; both stop with the file.
 */
export function useCluster<C extends { disconnect(): void }>(
  connect: (nodes: ReadonlyArray<{ host: string; port: number }>) => C,
): () => C {
  let cluster: RedisCluster | undefined
  let client: C | undefined
  beforeAll(async () => {
    cluster = await startCluster(3, 0)
    client = connect(cluster.startupNodes)
  }, 60_000)
  afterAll(async () => {
    client?.disconnect()
    await cluster?.stop()
  })
  return () => {
    if (client === undefined) throw new Error('useCluster: the cluster is there only inside tests')
    return client
  }
}
