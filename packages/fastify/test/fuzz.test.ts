// Property test: the plugin on Fastify 4 and 5 (through inject), with MemoryStore and with Redis,
// driven by random methods, paths, header values, key callback results (any string, lone
// surrogates included, or nonsense) and costs, against a model of the counters: no crash, no 500
// caused by the limiter on a valid request, the right status and the right headers.
import * as core from '@limiter/core'
import { Redis } from 'ioredis'
import { describe } from 'vitest'
import { useRedis } from '../../../test-support/adapter-helpers.js'
import { describeFuzzContract, fuzzStores } from '../../../test-support/rate-limit-fuzz.js'
import { type RateLimitPluginOptions, RedisStore, rateLimit } from '../src/index.js'
import { FASTIFY } from './helpers.js'

const redis = useRedis((port) => new Redis(port, '127.0.0.1'))

describe.each(FASTIFY)('$version', ({ fastify }) => {
  describeFuzzContract('random requests against a model', {
    ...fuzzStores(core, () => new RedisStore({ client: redis() })),
    // Well-formed paths only: Fastify answers a malformed percent-escape with 400 before routing.
    wellFormedPaths: true,
    async mount(options) {
      const app = fastify()
      await app.register(rateLimit, options as unknown as RateLimitPluginOptions)
      app.all('/*', async (_request, reply) => reply.type('text/plain').send('ok'))
      return {
        async send(s) {
          const res = await app.inject({
            method: s.method as 'GET',
            url: s.path,
            headers: s.headers,
          })
          return { status: res.statusCode, headers: res.headers, body: res.body }
        },
        unmount: () => app.close(),
      }
    },
  })
})
