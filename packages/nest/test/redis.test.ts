// The guard on a real Redis (a private redis-server started by this file), on Nest's Express and
// Fastify platforms: the shared Redis and concurrency contracts.
import { createLimiter } from '@limiter/core'
import { Controller, Get } from '@nestjs/common'
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { freshPrefix, useRedis } from '../../../test-support/adapter-helpers.js'
import { describeRedisContracts } from '../../../test-support/shared-contracts.js'
import { RateLimit, RedisStore } from '../src/index.js'
import { harness, nestApp, PLATFORMS, sender } from './helpers.js'

const connect = (port: number) => new Redis(port, '127.0.0.1')
const client = useRedis(connect)

@Controller()
@RateLimit({ limit: 2, window: '1m' })
class Exports {
  @Get('a')
  a() {
    return 'a'
  }

  @Get('b')
  @RateLimit({ limit: 1, name: 'b-shared' })
  b() {
    return 'b'
  }
}

describe.each(PLATFORMS)('nest on $platform, on Redis', (platform) => {
  describeRedisContracts(harness(platform), {
    client,
    connect,
    store: (c) => new RedisStore({ client: c }),
    createLimiter,
  })

  it("two app instances share each handler's counters, named after controller and handler", async () => {
    const redis = client()
    const prefix = freshPrefix()
    const [one, two] = [
      await nestApp(platform, { redis, prefix, window: '1m' }, [Exports]),
      await nestApp(platform, { redis, prefix, window: '1m' }, [Exports]),
    ]
    const [a, b] = [sender(platform, one), sender(platform, two)]
    expect((await a('/a')).status).toBe(200)
    expect((await b('/a')).status).toBe(200)
    expect((await a('/a')).status).toBe(429)
    expect((await b('/b')).status).toBe(200)
    expect((await a('/b')).status).toBe(429)
    expect((await redis.keys(`${prefix}*`)).sort()).toEqual([
      `${prefix}b-shared:gc:{127.0.0.1}`,
      `${prefix}gc2/1m:{Exports.a#127.0.0.1}`,
    ])
    await Promise.all([one.close(), two.close()])
  })
})
