// The peers, each store called the way its own middleware calls it, so no HTTP is involved:
// the decision is the library's own rule (e.g. express-rate-limit limits when totalHits > limit).
import { createRequire } from 'node:module'
import { MemoryStore as ErlMemoryStore } from 'express-rate-limit'
import { RedisStore as ErlRedisStore } from 'rate-limit-redis'
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible'

const require = createRequire(import.meta.url)
// @fastify/rate-limit has no exports map; its stores are the files the plugin itself requires.
const FastifyRedisStore = require('@fastify/rate-limit/store/RedisStore.js')
const FastifyLocalStore = require('@fastify/rate-limit/store/LocalStore.js')
const KoaRedisLimiter = require('koa-ratelimit/limiter/redis.js')
const KoaMemoryLimiter = require('koa-ratelimit/limiter/memory.js')

const noop = async () => {}

// rate-limiter-flexible rejects with a RateLimiterRes (not an Error) when the key is over its limit.
const rlfDenied = (reason) => {
  if (reason instanceof Error) throw reason
  return false
}

function fastifyDecide(store, windowMs, limit) {
  return (key) =>
    new Promise((resolve, reject) => {
      store.incr(
        key,
        (error, result) => (error ? reject(error) : resolve(result.current <= limit)),
        windowMs,
        limit,
      )
    })
}

const PEERS = {
  'express-rate-limit': {
    async redis({ connect, limit, windowMs }) {
      const client = await connect()
      const store = new ErlRedisStore({
        sendCommand: (command, ...args) => client.call(command, ...args),
      })
      await store.init({ windowMs })
      return {
        decide: (key) => store.increment(key),
        allowed: (r) => r.totalHits <= limit,
        close: () => client.quit(),
      }
    },
    async memory({ limit, windowMs }) {
      const store = new ErlMemoryStore()
      store.init({ windowMs })
      return {
        decide: (key) => store.increment(key),
        allowed: (r) => r.totalHits <= limit,
        close: async () => store.shutdown(),
      }
    },
  },
  'rate-limiter-flexible': {
    async redis({ connect, limit, windowMs }) {
      const client = await connect()
      const limiter = new RateLimiterRedis({
        storeClient: client,
        points: limit,
        duration: windowMs / 1000,
      })
      return {
        decide: (key) => limiter.consume(key).then(() => true, rlfDenied),
        close: () => client.quit(),
      }
    },
    async memory({ limit, windowMs }) {
      const limiter = new RateLimiterMemory({ points: limit, duration: windowMs / 1000 })
      return { decide: (key) => limiter.consume(key).then(() => true, rlfDenied), close: noop }
    },
  },
  '@fastify/rate-limit': {
    async redis({ connect, limit, windowMs }) {
      const client = await connect()
      // (continueExceeding, exponentialBackoff, redis, nameSpace): the plugin's defaults.
      const store = new FastifyRedisStore(false, false, client, 'fastify-rate-limit-')
      return { decide: fastifyDecide(store, windowMs, limit), close: () => client.quit() }
    },
    async memory({ limit, windowMs }) {
      // The plugin's LRU holds 5000 keys by default; sized here to hold every key of the run.
      const store = new FastifyLocalStore(false, false, 200_000)
      return { decide: fastifyDecide(store, windowMs, limit), close: noop }
    },
  },
  'koa-ratelimit': {
    // The middleware builds a limiter per request and lets it through while `remaining > 0`.
    async redis({ connect, limit, windowMs }) {
      const db = await connect()
      return {
        decide: (id) => new KoaRedisLimiter({ id, db, max: limit, duration: windowMs }).get(),
        allowed: (r) => r.remaining > 0,
        close: () => db.quit(),
      }
    },
    async memory({ limit, windowMs }) {
      const db = new Map()
      return {
        decide: (id) => new KoaMemoryLimiter({ id, db, max: limit, duration: windowMs }).get(),
        allowed: (r) => r.remaining > 0,
        close: noop,
      }
    },
  },
}

/** The peer library names, in table order. */
export const PEER_NAMES = Object.keys(PEERS)

/** One contender per peer and store. */
export const PEER_CONTENDERS = ['redis', 'memory'].flatMap((store) =>
  PEER_NAMES.map((name) => ({
    id: `${name}/${store}`,
    owner: name,
    label: name,
    store,
    create: PEERS[name][store],
  })),
)
