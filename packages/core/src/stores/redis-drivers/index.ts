// Picks the driver of a client by its shape (never `instanceof`: your copy of a library may not be ours).
import {
  clientKind,
  type NodeRedisClientLike,
  type NodeRedisClusterLike,
  type RedisClientLike,
} from '../redis-client.js'
import type { RedisDriver } from './driver.js'
import { ioredisDriver } from './ioredis.js'
import { nodeRedisClusterDriver, nodeRedisDriver } from './node-redis.js'

export type { RedisDriver } from './driver.js'

/** The expected value, for the error a wrong `client` (or `redis`) gets. */
export const CLIENT_EXPECTED =
  'an ioredis Redis or Cluster client, or a node-redis client from createClient() or createCluster()'

/** The driver of `client`, or undefined when it has none of the shapes the store knows. */
export function driverOf(client: unknown): RedisDriver | undefined {
  switch (clientKind(client)) {
    case 'ioredis':
      return ioredisDriver(client as RedisClientLike)
    case 'node-redis':
      return nodeRedisDriver(client as NodeRedisClientLike)
    case 'node-redis-cluster':
      return nodeRedisClusterDriver(client as NodeRedisClusterLike)
    default:
      return undefined
  }
}
