// Property test: rateLimit() on a real listening Express 4 and 5 server, with MemoryStore and with
// Redis, driven by random methods, paths, header values, key callback results (any string, lone
// surrogates included, or nonsense) and costs, against a model of the counters: no crash, no 500
// caused by the limiter on a valid request, the right status and the right headers.
import * as core from '@limiter/core'
import type { RequestHandler } from 'express'
import { Redis } from 'ioredis'
import { describe } from 'vitest'
import { useRedis } from '../../../test-support/adapter-helpers.js'
import {
  describeFuzzContract,
  fuzzStores,
  useFuzzServer,
} from '../../../test-support/rate-limit-fuzz.js'
import { type RateLimitOptions, RedisStore, rateLimit } from '../src/index.js'
import { EXPRESS, showErrors } from './helpers.js'

const redis = useRedis((port) => new Redis(port, '127.0.0.1'))

describe.each(EXPRESS)('$version', ({ express }) => {
  // The app stays up; each property run swaps in a fresh limiter.
  let limiter: RequestHandler = (_req, _res, next) => next()
  const send = useFuzzServer(() => {
    const app = express()
    app.use((req, res, next) => limiter(req, res, next))
    app.use((_req, res) => {
      res.status(200).send('ok')
    })
    app.use(showErrors)
    return app.listen(0, '127.0.0.1')
  })

  describeFuzzContract('random requests against a model', {
    ...fuzzStores(core, () => new RedisStore({ client: redis() })),
    async mount(options) {
      limiter = rateLimit(options as unknown as RateLimitOptions)
      return { send: send(), unmount: async () => {} }
    },
  })
})
