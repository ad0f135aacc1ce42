// Section 5's contenders: two limits on one key (per second and per day), on Redis. Each one's
// `counters(key)` reads back, per policy, the units its counters hold for `key`, for the quota phase.
import { createLimiter, MemoryStore, RedisStore } from '@limiter/core'
import { RedisStore as ErlRedisStore } from 'rate-limit-redis'
import { RateLimiterRedis, RateLimiterUnion } from 'rate-limiter-flexible'
import { TWO_LIMITS } from '../config.mjs'

const NOT_AVAILABLE = 'not available (core has no `limits` yet)'

const isAllowed = (decision) => decision.allowed

// The bench's policies ({ name, limit, windowMs, algorithm }) as `limits` entries.
const specsOf = (limits) =>
  limits.map(({ name, limit, windowMs, algorithm }) => ({
    name,
    limit,
    window: windowMs,
    algorithm,
  }))

/**
 * Why the `@limiter/core` given cannot run a limiter with several `limits`, or undefined when it
 * can. A core from before `limits` refuses the option by name (`is not an option`); any other
 * error is a real failure and is thrown.
 */
export function limitsUnavailable(core = { createLimiter, MemoryStore }) {
  let limiter
  try {
    limiter = core.createLimiter({
      limits: specsOf(TWO_LIMITS.limits),
      store: new core.MemoryStore({ maxKeys: 1 }),
    })
  } catch (error) {
    if (error?.option === 'limits' && /is not an option/.test(error.message)) return NOT_AVAILABLE
    throw error
  }
  return limiter.policies?.length === TWO_LIMITS.limits.length ? undefined : NOT_AVAILABLE
}

// Units a policy's counter holds, from a peek: what the limit was lowered by.
const usedOf = (decision) => decision.policies.map((p) => p.limit - p.remaining)

const oursTwo = {
  id: 'ours/two-limits/redis',
  owner: 'ours',
  label: 'ours, limits option (one script call)',
  policies: 2,
  store: 'redis',
  unavailable: () => limitsUnavailable(),
  async create({ connect, limits }) {
    const client = await connect()
    const make = (options) =>
      createLimiter({ limits: specsOf(limits), store: new RedisStore({ client }), ...options })
    const limiter = make()
    // Reads what Redis holds: a peek of a limiter whose blocked-key cache is off always asks Redis.
    const reader = make({ blockedCache: false })
    return {
      decide: (key) => limiter.consume(key).then(isAllowed),
      counters: (key) => reader.peek(key).then(usedOf),
      close: () => client.quit(),
    }
  },
}

// The references: each policy alone, as a one-policy user writes it. The first is the issue's
// reference for the CPU targets; with the second, the report also compares ours with the sum of
// the two policies decided apart.
const alone = (index, id, label) => ({
  id,
  owner: 'ours',
  label,
  policies: 1,
  store: 'redis',
  unavailable: () => undefined,
  async create({ connect, limits }) {
    const client = await connect()
    const { limit, windowMs, algorithm } = limits[index]
    const limiter = createLimiter({
      algorithm,
      limit,
      window: windowMs,
      store: new RedisStore({ client }),
    })
    return { decide: (key) => limiter.consume(key).then(isAllowed), close: () => client.quit() }
  },
})
const oursOne = alone(0, 'ours/one-limit/redis', 'ours, 100/s alone (reference)')
const oursOther = alone(1, 'ours/other-limit/redis', 'ours, 10,000/day alone')

// RateLimiterUnion rejects with { [keyPrefix]: RateLimiterRes } when a limiter refused, and puts
// a store error in that object instead of throwing it.
const unionDenied = (reason) => {
  if (reason instanceof Error) throw reason
  const error = Object.values(reason ?? {}).find((r) => r instanceof Error)
  if (error) throw error
  return false
}

const rlfUnion = {
  id: 'rate-limiter-flexible/union/redis',
  owner: 'rate-limiter-flexible',
  label: 'rate-limiter-flexible, RateLimiterUnion',
  policies: 2,
  store: 'redis',
  unavailable: () => undefined,
  async create({ connect, limits }) {
    const client = await connect()
    // Each limiter needs its own keyPrefix, or both would count in one key (the default 'rlflx').
    const limiters = limits.map(
      ({ name, limit, windowMs }) =>
        new RateLimiterRedis({
          storeClient: client,
          keyPrefix: `rlflx-${name}`,
          points: limit,
          duration: windowMs / 1000,
        }),
    )
    const union = new RateLimiterUnion(...limiters)
    return {
      decide: (key) => union.consume(key).then(() => true, unionDenied),
      counters: (key) =>
        Promise.all(limiters.map((l) => l.get(key).then((r) => r?.consumedPoints ?? 0))),
      close: () => client.quit(),
    }
  },
}

// Two express-rate-limit middlewares in a row, each with its rate-limit-redis store: the first
// counts the request and answers 429 when its totalHits is over its limit (express-rate-limit's
// rule), so the second never sees it; otherwise the second counts it and decides.
const erlStacked = {
  id: 'express-rate-limit/stacked/redis',
  owner: 'express-rate-limit',
  label: 'express-rate-limit x2 stacked, rate-limit-redis',
  policies: 2,
  store: 'redis',
  unavailable: () => undefined,
  async create({ connect, limits }) {
    const client = await connect()
    // Each middleware needs its own prefix, or both would count in one key (the default 'rl:').
    const stores = await Promise.all(
      limits.map(async ({ name, windowMs }) => {
        const store = new ErlRedisStore({
          sendCommand: (command, ...args) => client.call(command, ...args),
          prefix: `rl-${name}:`,
        })
        await store.init({ windowMs })
        return store
      }),
    )
    return {
      decide: async (key) => {
        for (let i = 0; i < stores.length; i++) {
          const { totalHits } = await stores[i].increment(key)
          if (totalHits > limits[i].limit) return false
        }
        return true
      },
      // `get` of a missing key reads GET's nil as NaN hits.
      counters: (key) => Promise.all(stores.map((s) => s.get(key).then((r) => r.totalHits || 0))),
      close: () => client.quit(),
    }
  },
}

/** Section 5's contenders, ours first. */
export const TWO_LIMIT_CONTENDERS = [oursTwo, oursOne, oursOther, rlfUnion, erlStacked]
