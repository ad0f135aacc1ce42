// The store contract on MemoryStore, on standalone Redis and on a local Redis Cluster.
import { MemoryStore, RedisStore } from '../src/index.js'
import { useCluster, useRedis } from './setup/redis.js'
import { describeStoreContract } from './store-contract.js'

const redis = useRedis()
const cluster = useCluster(3, 1)

describeStoreContract('MemoryStore', () => new MemoryStore())
describeStoreContract('RedisStore (standalone)', () => new RedisStore({ client: redis.client }))
describeStoreContract('RedisStore (cluster)', () => new RedisStore({ client: cluster.client }))
