// The store contract on MemoryStore, on standalone Redis and on a local Redis Cluster.
import { Cluster } from 'ioredis'
import { afterAll, beforeAll } from 'vitest'
import { type RedisCluster, startCluster } from '../../../test-support/redis.js'
import { MemoryStore, RedisStore } from '../src/index.js'
import { useRedis } from './setup/redis.js'
import { describeStoreContract } from './store-contract.js'

const redis = useRedis()
let cluster: RedisCluster
let clusterClient: Cluster

beforeAll(async () => {
  cluster = await startCluster(3, 1)
  clusterClient = new Cluster(cluster.startupNodes.slice(0, 3))
  await new Promise<void>((resolve, reject) => {
    clusterClient.once('ready', () => resolve())
    clusterClient.once('error', reject)
  })
}, 120_000)

afterAll(async () => {
  clusterClient?.disconnect()
  await cluster?.stop()
})

describeStoreContract('MemoryStore', () => new MemoryStore())
describeStoreContract('RedisStore (standalone)', () => new RedisStore({ client: redis.client }))
describeStoreContract('RedisStore (cluster)', () => new RedisStore({ client: clusterClient }))
