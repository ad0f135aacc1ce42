// Property test: rateLimit() on a real listening Koa 2 and 3 server, with MemoryStore and with
// Redis, driven by random methods, paths, header values, key callback results (any string, lone
// surrogates included, or nonsense) and costs, against a model of the counters: no crash, no 500
// caused by the limiter on a valid request, the right status and the right headers.
import { Agent } from 'node:http'
import { defaultName, definePolicy, MemoryStore } from '@limiter/core'
import { Redis } from 'ioredis'
import type { Middleware } from 'koa'
import { afterAll, beforeAll, describe } from 'vitest'
import { served, useRedis } from '../../../test-support/adapter-helpers.js'
import {
  type Answer,
  describeFuzzContract,
  httpSender,
  type Shot,
} from '../../../test-support/rate-limit-fuzz.js'
import { type RateLimitOptions, RedisStore, rateLimit } from '../src/index.js'
import { KOA, showErrors } from './helpers.js'

const redis = useRedis((port) => new Redis(port, '127.0.0.1'))

describe.each(KOA)('$version', ({ Koa }) => {
  let server: Awaited<ReturnType<typeof served>>
  const agent = new Agent({ keepAlive: true })
  let send: (shot: Shot) => Promise<Answer>
  // The app stays up; each property run swaps in a fresh limiter.
  let limiter: Middleware = (_ctx, next) => next()

  beforeAll(async () => {
    const app = new Koa()
    app.use(showErrors)
    app.use((ctx, next) => limiter(ctx, next))
    app.use((ctx) => {
      ctx.status = 200
      ctx.body = 'ok'
    })
    server = await served(app.listen(0, '127.0.0.1'))
    send = httpSender(server.url, agent)
  })
  afterAll(async () => {
    agent.destroy()
    await server.close()
  })

  describeFuzzContract('random requests against a model', {
    stores: [
      ['MemoryStore', () => new MemoryStore()],
      ['RedisStore', () => new RedisStore({ client: redis() })],
    ],
    name: (options) => defaultName(definePolicy({ ...options, window: '1h' })),
    async mount(options) {
      limiter = rateLimit(options as unknown as RateLimitOptions) as Middleware
      return { send, unmount: async () => {} }
    },
  })
})
