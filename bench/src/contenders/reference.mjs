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

export const REFERENCES = [trivialScript(false), trivialScript(true), harness]
