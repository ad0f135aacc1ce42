// The guard on a real Redis (a private redis-server started by this file), on Nest's Express and
// Fastify platforms: the shared Redis and concurrency contracts.
import { createLimiter } from '@limiter/core'
import { Redis } from 'ioredis'
import { describe } from 'vitest'
import { useRedis } from '../../../test-support/adapter-helpers.js'
import { describeConcurrencyContract } from '../../../test-support/concurrency-contract.js'
import { freePort } from '../../../test-support/redis.js'
import { describeRedisContract } from '../../../test-support/redis-contract.js'
import { RedisStore } from '../src/index.js'
import { harness, PLATFORMS } from './helpers.js'

const client = useRedis((port) => new Redis(port, '127.0.0.1'))

describe.each(PLATFORMS)('nest on $platform, on Redis', (platform) => {
  describeRedisContract('adapter contract', harness(platform), {
    client,
    store: () => new RedisStore({ client: client() }),
    unreachable: async () => {
      const port = await freePort()
      return { client: new Redis(port, '127.0.0.1'), address: `127.0.0.1:${port}` }
    },
  })
  describeConcurrencyContract('concurrency and waiting', harness(platform), {
    store: () => new RedisStore({ client: client() }),
    batching: true,
    createLimiter,
  })
})
