// Property test: rateLimit() on a real listening Express 4 and 5 server, with MemoryStore and with
// Redis, driven by random methods, paths, header values, key callback results (any string, lone
// surrogates included, or nonsense) and costs, against a model of the counters: no crash, no 500
// caused by the limiter on a valid request, the right status and the right headers.
import type { Server } from 'node:http'
import { Agent } from 'node:http'
import type { AddressInfo } from 'node:net'
import { defaultName, definePolicy, MemoryStore, type Store } from '@limiter/core'
import type { RequestHandler } from 'express'
import fc from 'fast-check'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, it } from 'vitest'
import {
  type Answer,
  callbacks,
  checkShots,
  httpSender,
  type Shot,
  scenarioArbitrary,
} from '../../../test-support/rate-limit-fuzz.js'
import { type RedisProcess, startRedis } from '../../../test-support/redis.js'
import { RedisStore, rateLimit } from '../src/index.js'
import { EXPRESS, showErrors } from './helpers.js'

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

describe.each(EXPRESS)('$version: random requests against a model', ({ express }) => {
  let server: Server
  const agent = new Agent({ keepAlive: true })
  let send: (shot: Shot) => Promise<Answer>
  // The app stays up; each property run swaps in a fresh limiter.
  let limiter: RequestHandler = (_req, _res, next) => next()
  let current: Shot | undefined

  beforeAll(async () => {
    const app = express()
    app.use((req, res, next) => limiter(req, res, next))
    app.use((_req, res) => {
      res.status(200).send('ok')
    })
    app.use(showErrors)
    server = app.listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
    send = httpSender(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, agent)
  })
  afterAll(async () => {
    agent.destroy()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })

  it.each<[string, () => Store]>([
    ['MemoryStore', () => new MemoryStore()],
    ['RedisStore', () => new RedisStore({ client: redis })],
  ])(
    '%s',
    async (_name, makeStore) => {
      await fc.assert(
        fc.asyncProperty(scenarioArbitrary(), async ({ options, shots }) => {
          limiter = rateLimit({
            ...options,
            window: '1h',
            store: makeStore(),
            prefix: `fuzz${++run}:`,
            failureMode: 'closed',
            ...callbacks(() => current),
          })
          const name = defaultName(definePolicy({ ...options, window: '1h' }))
          await checkShots(options, name, shots, send, (s) => {
            current = s
          })
        }),
        { numRuns: 100 },
      )
    },
    60_000,
  )
})
