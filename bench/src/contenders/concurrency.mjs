// Section 6's contenders: a concurrency limit per key on Redis, each request taking a slot and
// giving it back (no work in between: the cost of the limiter itself).
import * as core from '@limiter/core'
import { CONCURRENCY } from '../config.mjs'

const NOT_AVAILABLE = "not available (core has no 'concurrency' algorithm yet)"

/** Ours: the 'concurrency' algorithm, consume then release (two script calls, batched). */
const ours = {
  id: 'ours/concurrency/redis',
  owner: 'ours',
  label: 'ours, concurrency (lease per request)',
  store: 'redis',
  unavailable: () => (core.ALGORITHMS.includes('concurrency') ? undefined : NOT_AVAILABLE),
  async create({ connect }) {
    const client = await connect()
    const limiter = core.createLimiter({
      algorithm: 'concurrency',
      limit: CONCURRENCY.limit,
      window: CONCURRENCY.windowMs,
      store: new core.RedisStore({ client }),
    })
    return {
      async decide(key) {
        const d = await limiter.consume(key)
        if (d.allowed) await limiter.release(key, d)
        return d.allowed
      },
      close: () => client.quit(),
    }
  },
}

/**
 * The practice peers' users write by hand (no peer limits concurrency): INCR the key's counter,
 * DECR it back when refused or when the request ends, and an EXPIRE so a key cannot stay forever.
 * A process that dies between its INCR and its DECR leaks that slot until the key expires, and
 * the EXPIRE, refreshed by every request, keeps a busy key's leak for good.
 */
const incrDecr = {
  id: 'incr-decr/redis',
  owner: 'practice',
  label: 'INCR/DECR pair (leaks slots on a crash)',
  store: 'redis',
  unavailable: () => undefined,
  async create({ connect }) {
    const client = await connect()
    const seconds = Math.ceil(CONCURRENCY.windowMs / 1000)
    return {
      async decide(key) {
        const [[, n]] = await client.multi().incr(key).expire(key, seconds).exec()
        await client.decr(key)
        return n <= CONCURRENCY.limit
      },
      close: () => client.quit(),
    }
  },
}

/**
 * The same practice at its leanest: no MULTI, the INCR and a PEXPIRE sent together on an
 * auto-pipelined client (ioredis writes every command of a tick in one batch, as our store
 * batches its script calls), then the DECR. Three commands, two round trips, no atomic step
 * beyond each command; it leaks exactly as the pair above.
 */
const incrDecrPipelined = {
  id: 'incr-decr-pipelined/redis',
  owner: 'practice',
  label: 'INCR/DECR pair, auto-pipelined',
  store: 'redis',
  unavailable: () => undefined,
  async create({ connect }) {
    const client = await connect({ autoPipelining: true })
    return {
      async decide(key) {
        const [n] = await Promise.all([client.incr(key), client.pexpire(key, CONCURRENCY.windowMs)])
        await client.decr(key)
        return n <= CONCURRENCY.limit
      },
      close: () => client.quit(),
    }
  },
}

export const CONCURRENCY_CONTENDERS = [ours, incrDecr, incrDecrPipelined]
