// Core test setup: one private redis-server (or local Cluster) per test file, and a client on it.
import { Cluster, Redis } from 'ioredis'
import { afterAll, beforeAll } from 'vitest'
import { useRedisServer } from '../../../../test-support/adapter-helpers.js'
import { type RedisCluster, startCluster } from '../../../../test-support/redis.js'

/** Starts a private Redis for this file; `server` and `client` are there inside tests. */
export function useRedis() {
  return useRedisServer((port) => new Redis(port, '127.0.0.1', { lazyConnect: false }))
}

/**
 * Starts a local Redis Cluster for this file (`masters` masters, `replicas` replicas each) and an
 * ioredis Cluster client on its masters, ready; `cluster` and `client` are there inside tests.
 */
export function useCluster(masters = 3, replicas = 0): { cluster: RedisCluster; client: Cluster } {
  const ctx = {} as { cluster: RedisCluster; client: Cluster }
  beforeAll(async () => {
    ctx.cluster = await startCluster(masters, replicas)
    ctx.client = new Cluster(ctx.cluster.startupNodes.slice(0, masters))
    await new Promise<void>((resolve, reject) => {
      ctx.client.once('ready', () => resolve())
      ctx.client.once('error', reject)
    })
  }, 120_000)
  afterAll(async () => {
    ctx.client?.disconnect()
    await ctx.cluster?.stop()
  })
  return ctx
}

/** Every key matching `match`, on a Redis or on every master of a Cluster. */
export async function scanKeys(client: Redis | Cluster, match: string): Promise<string[]> {
  const nodes = client instanceof Cluster ? client.nodes('master') : [client]
  const keys: string[] = []
  for (const node of nodes) {
    let cursor = '0'
    do {
      const [next, batch] = await node.scan(cursor, 'MATCH', match, 'COUNT', 1000)
      cursor = next
      keys.push(...batch)
    } while (cursor !== '0')
  }
  return keys
}
