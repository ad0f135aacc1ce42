// The driver for ioredis (and iovalkey): `Redis` and `Cluster`.
import {
  clientAddress,
  type RedisClientLike,
  watchConnected,
  watchErrors,
} from '../redis-client.js'
import type { RedisDriver } from './driver.js'

const QUIT =
  'The client was closed (`quit()` or `disconnect()`) and does not reconnect: build the store on an open client.'

// ioredis's EVALSHA with replies left as the server sent them (bulk strings as Buffers).
type EvalshaBuffer = (
  sha1: string,
  numkeys: number,
  args: ReadonlyArray<string | number>,
) => Promise<unknown>

export function ioredisDriver(client: RedisClientLike): RedisDriver {
  const c = client as RedisClientLike & {
    status?: unknown
    slots?: unknown
    isCluster?: unknown
    evalshaBuffer?: unknown
  }
  const address = clientAddress(client)
  // ioredis connects by itself (with `lazyConnect`, at the first command): only a client already
  // quit (`end`) never will.
  watchConnected(client, () => c.status === 'end', address, QUIT)
  const lastError = watchErrors(client)
  return {
    cluster: c.isCluster === true,
    address,
    // ioredis prints "Unhandled error event" for every failed reconnect when a client has no
    // error listener: one line per attempt for the whole outage. The store's listener keeps
    // the last error for the failure report instead.
    lastError,
    // ioredis's (and iovalkey's) `evalshaBuffer` when there: our scripts reply with integers
    // only, which no reply encoding changes, so the client skips copying every reply through
    // its string conversion; it flattens its arguments, so the list goes as one, unspread.
    evalsha:
      typeof c.evalshaBuffer === 'function'
        ? (sha1, numkeys, args) =>
            (c.evalshaBuffer as EvalshaBuffer).call(client, sha1, numkeys, args)
        : (sha1, numkeys, args) => client.evalsha(sha1, numkeys, ...args),
    eval: (source, numkeys, args) => client.eval(source, numkeys, ...args),
    del: (keys) => client.del(...keys),
    // A disconnected ioredis client queues commands until it reconnects (its offline queue).
    // Between attempts its status says so; during a new attempt after a failed one (`connecting`,
    // up to `connectTimeout` on a host that drops packets, or `connect` while a server that
    // accepted stays silent) only the recorded error does, as node-redis.ts reads it too.
    down: () => {
      const status = c.status
      if (status === 'ready') return undefined
      if (status === 'reconnecting' || status === 'close' || status === 'end') {
        return `client ${status}`
      }
      return lastError.code !== undefined ? 'client reconnecting' : undefined
    },
    // ioredis Cluster's slot map, `slots[slot][0]`: the master, which follows failovers.
    masterOf: (slot) => {
      const master = (c.slots as ReadonlyArray<readonly unknown[] | undefined> | undefined)?.[
        slot
      ]?.[0]
      return typeof master === 'string' ? master : undefined
    },
  }
}
