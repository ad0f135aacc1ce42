// Property test: rateLimit() on a real listening Koa 2 and 3 server, with MemoryStore and with
// Redis, driven by random methods, paths, header values, key callback results (any string, lone
// surrogates included, or nonsense) and costs, against a model of the counters: no crash, no 500
// caused by the limiter on a valid request, the right status and the right headers.
import * as core from '@limiter/core'
import { Redis } from 'ioredis'
import type { Middleware } from 'koa'
import { describe } from 'vitest'
import { useRedis } from '../../../test-support/adapter-helpers.js'
import {
  describeFuzzContract,
  fuzzStores,
  useFuzzServer,
} from '../../../test-support/rate-limit-fuzz.js'
import { type RateLimitOptions, RedisStore, rateLimit } from '../src/index.js'
import { KOA, showErrors } from './helpers.js'

const redis = useRedis((port) => new Redis(port, '127.0.0.1'))

describe.each(KOA)('$version', ({ Koa }) => {
  // The app stays up; each property run swaps in a fresh limiter.
  let limiter: Middleware = (_ctx, next) => next()
  const send = useFuzzServer(() => {
    const app = new Koa()
    app.use(showErrors)
    app.use((ctx, next) => limiter(ctx, next))
    app.use((ctx) => {
      ctx.status = 200
      ctx.body = 'ok'
    })
    return app.listen(0, '127.0.0.1')
  })

  describeFuzzContract('random requests against a model', {
    ...fuzzStores(core, () => new RedisStore({ client: redis() })),
    async mount(options) {
      limiter = rateLimit(options as unknown as RateLimitOptions) as Middleware
      return { send: send(), unmount: async () => {} }
    },
  })
})
