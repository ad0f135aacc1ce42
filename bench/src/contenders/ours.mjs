// Our limiter, @limiter/core, with each algorithm on RedisStore and on MemoryStore.
import { ALGORITHMS, createLimiter, MemoryStore, RedisStore } from '@limiter/core'

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
        decide: (key) => limiter.consume(key).then(isAllowed),
        close: async () => client?.quit(),
      }
    },
  }
}

/** One contender per algorithm and store. */
export const OURS = ['redis', 'memory'].flatMap((store) => ALGORITHMS.map((a) => ours(a, store)))
