// Reference points: the "one round trip" ceiling and the harness's own cost.

const INCR = "return redis.call('INCR', KEYS[1])"

function trivialScript(autoPipelining) {
  return {
    id: autoPipelining ? 'reference/evalsha-autopipelined/redis' : 'reference/evalsha/redis',
    owner: 'reference',
    label: autoPipelining ? 'INCR script, auto-pipelined' : 'INCR script (EVALSHA)',
    store: 'redis',
    async create({ connect, limit }) {
      const client = await connect({ autoPipelining })
      const sha = await client.script('LOAD', INCR)
      return {
        decide: (key) => client.evalsha(sha, 1, key).then((count) => count <= limit),
        close: () => client.quit(),
      }
    },
  }
}

/** A no-op that resolves at once: what the driver itself costs per decision. */
const harness = {
  id: 'reference/no-op/memory',
  owner: 'reference',
  label: 'harness only (resolved promise)',
  store: 'memory',
  async create() {
    return { decide: () => Promise.resolve(true), close: async () => {} }
  },
}

/**
 * The least an in-process limiter can do per decision, and no more: read the clock, look the
 * key up in one Map, count, and answer with a promise. A fixed window with no bound on its keys,
 * no sweep and no decision to read, so not a limiter anyone should ship: a floor. Every
 * MemoryStore contender, ours and the peers', pays these steps; what the harness and the floor
 * leave of a peer's rate is all a limiter can gain on it (BENCHMARKS.md, issue 29's targets).
 */
const mapFloor = {
  id: 'reference/map-counter/memory',
  owner: 'reference',
  label: 'floor: clock + one Map counter (no limiter)',
  store: 'memory',
  async create({ limit, windowMs }) {
    const counters = new Map()
    return {
      decide: (key) => {
        const now = Date.now()
        let counter = counters.get(key)
        if (counter === undefined || counter.endMs <= now) {
          counter = { endMs: now + windowMs, hits: 0 }
          counters.set(key, counter)
        }
        return Promise.resolve(++counter.hits <= limit)
      },
      close: async () => counters.clear(),
    }
  },
}

export const REFERENCES = [trivialScript(false), trivialScript(true), harness, mapFloor]
