// Client libraries (section 7): ours on ioredis and on node-redis, and the peers that take a
// node-redis client, each the way its documentation shows.
import * as core from '@limiter/core'
import { Redis } from 'ioredis'
import { RedisStore as ErlRedisStore } from 'rate-limit-redis'
import { RateLimiterRedis } from 'rate-limiter-flexible'
import { createClient } from 'redis'

const { createLimiter, failureOf, RedisStore } = core

// A decision the limiter answered from failureMode (timeout, open circuit) is no decision by
// Redis: count it as an error, so a fast run of failures never passes for a fast run.
const decided = (decision) => {
  const failure = failureOf(decision)
  if (failure !== undefined) throw failure
  return decision.allowed
}
const ALGORITHM = 'sliding-window' // the default until gcra; kept so the comparison stays like for like

const rlfDenied = (reason) => {
  if (reason instanceof Error) throw reason
  return false
}

async function nodeRedis(port) {
  const client = createClient({ url: `redis://127.0.0.1:${port}` })
  client.on('error', () => {})
  await client.connect()
  return client
}

function ours(label, connect) {
  return {
    id: `ours/${label}`,
    owner: 'ours',
    label: `ours ${ALGORITHM} on ${label}`,
    store: 'redis',
    unavailable: () => undefined,
    async create({ port, limit, windowMs }) {
      const client = await connect(port)
      const limiter = createLimiter({
        algorithm: ALGORITHM,
        limit,
        window: windowMs,
        store: new RedisStore({ client }),
      })
      return {
        decide: (key) => limiter.consume(key).then(decided),
        close: async () => void (await client.quit()),
      }
    },
  }
}

/** The contenders of section 7. `create` takes the bench Redis's `port`. */
export const CLIENT_CONTENDERS = [
  ours('ioredis', async (port) => {
    const client = new Redis({ host: '127.0.0.1', port })
    await client.ping()
    return client
  }),
  ours('node-redis', nodeRedis),
  {
    id: 'rate-limiter-flexible/node-redis',
    owner: 'rate-limiter-flexible',
    label: 'rate-limiter-flexible on node-redis (useRedisPackage)',
    store: 'redis',
    unavailable: () => undefined,
    async create({ port, limit, windowMs }) {
      const client = await nodeRedis(port)
      const limiter = new RateLimiterRedis({
        storeClient: client,
        useRedisPackage: true,
        points: limit,
        duration: windowMs / 1000,
      })
      return {
        decide: (key) => limiter.consume(key).then(() => true, rlfDenied),
        close: async () => void (await client.quit()),
      }
    },
  },
  {
    id: 'express-rate-limit/node-redis',
    owner: 'express-rate-limit',
    label: 'express-rate-limit + rate-limit-redis on node-redis (sendCommand)',
    store: 'redis',
    unavailable: () => undefined,
    async create({ port, limit, windowMs }) {
      const client = await nodeRedis(port)
      const store = new ErlRedisStore({ sendCommand: (...args) => client.sendCommand(args) })
      await store.init({ windowMs })
      return {
        decide: (key) => store.increment(key).then((r) => r.totalHits <= limit),
        close: async () => void (await client.quit()),
      }
    },
  },
]
