// Our limiter, @limiter/core, with each algorithm on RedisStore and on MemoryStore.
import * as core from '@limiter/core'

const { createLimiter, MemoryStore, RedisStore } = core
// The rate algorithms (section 1): `concurrency` counts requests in flight and has its own
// section (6); a core from before it has no RATE_ALGORITHMS, and all of its algorithms rate.
const RATE = core.RATE_ALGORITHMS ?? core.ALGORITHMS

const isAllowed = (decision) => decision.allowed

function ours(algorithm, store) {
  return {
    id: `ours/${algorithm}/${store}`,
    owner: 'ours',
    label: `ours ${algorithm}`,
    algorithm,
    store,
    async create({ connect, limit, windowMs }) {
      const client = store === 'redis' ? await connect() : undefined
      const limiter = createLimiter({
        algorithm,
        limit,
        window: windowMs,
        store: client ? new RedisStore({ client }) : new MemoryStore({ maxKeys: 200_000 }),
      })
      return {
        limiter,
        // the caller reads the decision it awaited: no promise between (as the peers' below)
        decide: (key) => limiter.consume(key),
        allowed: isAllowed,
        close: async () => client?.quit(),
      }
    },
  }
}

/** One contender per rate algorithm and store. */
export const OURS = ['redis', 'memory'].flatMap((store) => RATE.map((a) => ours(a, store)))
