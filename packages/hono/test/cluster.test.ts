// rateLimit() on Hono 4 on a local Redis Cluster (3 masters, started by this file): the shared
// adapter, limits and concurrency contracts, every limiter on a RedisStore over ioredis's
// Cluster client (the contract cases that bring a store of their own keep it).
import { createLimiter } from '@limiter/core'
import { Cluster } from 'ioredis'
import { describe } from 'vitest'
import { describeAdapterContract } from '../../../test-support/adapter-contract.js'
import { describeConcurrencyContract } from '../../../test-support/concurrency-contract.js'
import { describeLimitsContract } from '../../../test-support/limits-contract.js'
import { onStore, useCluster } from '../../../test-support/on-store.js'
import { RedisStore } from '../src/index.js'
import { harness } from './helpers.js'

const client = useCluster((nodes) => new Cluster([...nodes]))
const store = () => new RedisStore({ client: client() })

describe('hono 4 on a Redis Cluster', () => {
  describeAdapterContract('adapter contract', onStore(harness(), store))
  describeLimitsContract('several limits', onStore(harness(), store))
  describeConcurrencyContract('concurrency and waiting', harness(), {
    store,
    batching: true,
    createLimiter,
  })
})
