// The driver for ioredis (and iovalkey): `Redis` and `Cluster`.
import { keySlot } from '../cluster-slot.js'
import {
  clientAddress,
  type RedisClientLike,
  watchConnected,
  watchErrors,
} from '../redis-client.js'
import type { RedisDriver } from './driver.js'
import { StallWatches } from './stall-watch.js'

const QUIT =
  'The client was closed (`quit()` or `disconnect()`) and does not reconnect: build the store on an open client.'

// The parts of an ioredis client (or Cluster) the driver reads beyond RedisClientLike.
type IoredisLike = RedisClientLike & {
  status?: unknown
  slots?: unknown
  isCluster?: unknown
  evalshaBuffer?: unknown
  refreshSlotsCache?: (callback: (error?: unknown) => void) => void
}

// ioredis's EVALSHA with replies left as the server sent them (bulk strings as Buffers).
type EvalshaBuffer = (
  sha1: string,
  numkeys: number,
  args: ReadonlyArray<string | number>,
) => Promise<unknown>

export function ioredisDriver(client: RedisClientLike): RedisDriver {
  const c = client as IoredisLike
  const address = clientAddress(client)
  // ioredis connects by itself (with `lazyConnect`, at the first command): only a client quit
  // never will: `end`, or closing (`quit()` or `disconnect()` called, its status not `end` yet)
  const quitting = () =>
    c.status === 'end' || (client as { manuallyClosing?: unknown }).manuallyClosing === true
  watchConnected(client, quitting, address, QUIT)
  const lastError = watchErrors(client)
  const cluster = c.isCluster === true
  const masterOf = (slot: number): string | undefined => {
    // ioredis Cluster's slot map, `slots[slot][0]`: the master, which follows failovers.
    const master = (c.slots as ReadonlyArray<readonly unknown[] | undefined> | undefined)?.[
      slot
    ]?.[0]
    return typeof master === 'string' ? master : undefined
  }
  // On a Cluster, each call is watched on its master (the first key routes it).
  const watched = cluster
    ? watchMasters(c, masterOf)
    : (_key: unknown, sent: Promise<unknown>) => sent
  const evalsha =
    typeof c.evalshaBuffer === 'function'
      ? (sha1: string, numkeys: number, args: Array<string | number>) =>
          (c.evalshaBuffer as EvalshaBuffer).call(client, sha1, numkeys, args)
      : (sha1: string, numkeys: number, args: Array<string | number>) =>
          client.evalsha(sha1, numkeys, ...args)
  return {
    cluster,
    address,
    // ioredis prints "Unhandled error event" for every failed reconnect when a client has no
    // error listener: one line per attempt for the whole outage. The store's listener keeps
    // the last error for the failure report instead.
    lastError,
    // ioredis's (and iovalkey's) `evalshaBuffer` when there: our scripts reply with integers
    // only, which no reply encoding changes, so the client skips copying every reply through
    // its string conversion; it flattens its arguments, so the list goes as one, unspread.
    evalsha: (sha1, numkeys, args) => watched(args[0], evalsha(sha1, numkeys, args)),
    eval: (source, numkeys, args) => watched(args[0], client.eval(source, numkeys, ...args)),
    del: (keys) => watched(keys[0], client.del(...keys)),
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
    masterOf,
  }
}

/**
 * Watches each master's calls. ioredis follows a failover by itself when a command gets MOVED or
 * its master's connection drops, or every `slotsRefreshInterval` (off by default); a master that
 * hangs with its connection up gives it neither, and its slots would stay on it. So when a
 * master has left its calls unanswered for a second, the client loads the slot map again
 * (`refreshSlotsCache`: CLUSTER SLOTS from a node), at most once a second while it stays silent:
 * once its replica is promoted, the map names the replica and the slot's calls go there.
 */
function watchMasters(
  c: IoredisLike,
  masterOf: (slot: number) => string | undefined,
): (key: unknown, sent: Promise<unknown>) => Promise<unknown> {
  const watches = new StallWatches()
  return (key, sent) => {
    const master = masterOf(keySlot(String(key)))
    if (master !== undefined && watches.of(master).track(sent) && c.refreshSlotsCache)
      c.refreshSlotsCache(() => {})
    return sent
  }
}
