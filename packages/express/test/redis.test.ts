// rateLimit() on a real Redis (a private redis-server started by this file), Express 4 and 5.

import { createLimiter } from '@limiter/core'
import { Redis } from 'ioredis'
import { createClient } from 'redis'
import request from 'supertest'
import { describe, expect, it } from 'vitest'
import { freshPrefix, useRedis } from '../../../test-support/adapter-helpers.js'
import {
  describeRedisContracts,
  describeRedisOn,
  expectLoginLimited,
} from '../../../test-support/shared-contracts.js'
import { RedisStore, rateLimit } from '../src/index.js'
import { EXPRESS, harness } from './helpers.js'

const connect = (port: number) => new Redis(port, '127.0.0.1')
const client = useRedis(connect)
// node-redis 6, connecting in the background (commands wait for the first connection).
const connectNodeRedis = (port: number) => {
  const c = createClient({ url: `redis://127.0.0.1:${port}` })
  c.connect().catch(() => {})
  return c
}
const nodeRedis = useRedis(connectNodeRedis)

describe.each(EXPRESS)('$version on Redis through node-redis', ({ express }) => {
  describeRedisOn(harness(express), {
    client: nodeRedis,
    connect: connectNodeRedis,
    store: (c) => new RedisStore({ client: c }),
  })
})

describe.each(EXPRESS)('$version on Redis', ({ express }) => {
  describeRedisContracts(harness(express), {
    client,
    connect,
    store: (c) => new RedisStore({ client: c }),
    createLimiter,
  })

  it('limits a login route per e-mail with sliding-log, as in the README', async () => {
    const redis = client()
    const prefix = freshPrefix()
    const app = express()
    app.use(express.json())
    app.post(
      '/login',
      rateLimit({
        limit: 2,
        window: '15m',
        algorithm: 'sliding-log',
        key: (req) => `${req.body.email}`,
        redis,
        prefix,
      }),
      (_req, res) => {
        res.send('welcome')
      },
    )
    const login = (email: string) => request(app).post('/login').send({ email })
    await expectLoginLimited(login, () => redis.keys(`${prefix}*`), 'POST /login#a@example.com')
  })

  it('per-route limiters and the global one keep separate counters in Redis', async () => {
    const redis = client()
    const prefix = freshPrefix()
    const app = express()
    app.use(rateLimit({ limit: 2, window: '1m', redis, prefix }))
    app.get('/a', rateLimit({ limit: 2, window: '1m', redis, prefix }), (_req, res) => {
      res.send('a')
    })
    app.get('/b', rateLimit({ limit: 1, window: '1m', redis, prefix }), (_req, res) => {
      res.send('b')
    })
    const a = await request(app).get('/a')
    expect(a.headers.ratelimit).toMatch(/^"gc2\/1m";r=1;t=\d+$/) // two equal members, sent once
    const b = await request(app).get('/b')
    expect(b.status).toBe(200)
    expect(b.headers.ratelimit).toMatch(/^"gc2\/1m";r=0;t=\d+, "gc1\/1m";r=0;/) // the global's second, /b's first
    expect((await request(app).get('/a')).status).toBe(429) // the global limit of 2 is used up
  })
})
