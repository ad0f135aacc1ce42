// Property test: the plugin on Fastify 4 and 5 (through inject), with MemoryStore and with Redis,
// driven by random methods, paths, header values, key callback results (any string, lone
// surrogates included, or nonsense) and costs, against a model of the counters: no crash, no 500
// caused by the limiter on a valid request, the right status and the right headers.
import { defaultName, definePolicy, MemoryStore, type Store } from '@limiter/core'
import fc from 'fast-check'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, it } from 'vitest'
import {
  type Answer,
  callbacks,
  checkShots,
  type Shot,
  scenarioArbitrary,
} from '../../../test-support/rate-limit-fuzz.js'
import { type RedisProcess, startRedis } from '../../../test-support/redis.js'
import { RedisStore, rateLimit } from '../src/index.js'
import { FASTIFY } from './helpers.js'

let redisServer: RedisProcess
let redis: Redis
beforeAll(async () => {
  redisServer = await startRedis()
  redis = new Redis(redisServer.port, '127.0.0.1')
})
afterAll(async () => {
  redis?.disconnect()
  await redisServer?.stop()
})

/** Counts property runs across the file: each run gets counters of its own in Redis. */
let run = 0

describe.each(FASTIFY)('$version: random requests against a model', ({ fastify }) => {
  it.each<[string, () => Store]>([
    ['MemoryStore', () => new MemoryStore()],
    ['RedisStore', () => new RedisStore({ client: redis })],
  ])(
    '%s',
    async (_name, makeStore) => {
      await fc.assert(
        // Well-formed paths only: Fastify answers a malformed percent-escape with 400 before routing.
        fc.asyncProperty(scenarioArbitrary(true), async ({ options, shots }) => {
          let current: Shot | undefined
          const app = fastify()
          await app.register(rateLimit, {
            ...options,
            window: '1h',
            store: makeStore(),
            prefix: `fuzz${++run}:`,
            failureMode: 'closed',
            ...callbacks(() => current),
          })
          app.all('/*', async (_request, reply) => reply.type('text/plain').send('ok'))
          const send = async (s: Shot): Promise<Answer> => {
            const res = await app.inject({
              method: s.method as 'GET',
              url: s.path,
              headers: s.headers,
            })
            return { status: res.statusCode, headers: res.headers, body: res.body }
          }
          try {
            const name = defaultName(definePolicy({ ...options, window: '1h' }))
            await checkShots(options, name, shots, send, (s) => {
              current = s
            })
          } finally {
            await app.close()
          }
        }),
        { numRuns: 100 },
      )
    },
    60_000,
  )
})
