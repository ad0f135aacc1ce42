// The driver for node-redis (the `redis` package, majors 4 to 6): `createClient()` and
// `createCluster()`. Commands go through `sendCommand` with string arguments, which every
// major takes the same way; replies of our scripts are integer arrays in RESP2 and RESP3 alike.
import { clusterSlot, keySlot } from '../cluster-slot.js'
import type { NodeRedisClientLike, NodeRedisClusterLike } from '../redis-client.js'
import { watchConnected, watchErrors } from '../redis-client.js'
import type { RedisDriver } from './driver.js'
import { StallWatches } from './stall-watch.js'
import { Waves } from './waves.js'

type Node = { readonly address?: unknown; readonly client?: unknown }
type Options = {
  readonly url?: unknown
  readonly socket?: { readonly host?: unknown; readonly port?: unknown; readonly path?: unknown }
  readonly rootNodes?: readonly Options[]
}

// How often, at most, a Cluster driver asks a live master about a slot whose master is down.
const PROBE_EVERY_MS = 250

// A script command as node-redis sends it: every argument a string, in one array.
function command(
  name: string,
  script: string,
  numkeys: number,
  args: Array<string | number>,
): string[] {
  const out = new Array<string>(args.length + 3)
  out[0] = name
  out[1] = script
  out[2] = String(numkeys)
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string | number
    out[i + 3] = typeof arg === 'string' ? arg : String(arg)
  }
  return out
}

// A RESP3 client with a type mapping may hand numbers back as strings: the store reads numbers.
function numbers(reply: unknown): unknown {
  return Array.isArray(reply) && typeof reply[0] === 'string' ? reply.map(Number) : reply
}

function addressOf(options: Options | undefined): string | undefined {
  if (options === undefined || options === null || typeof options !== 'object') return undefined
  const socket = options.socket
  if (typeof socket?.path === 'string') return socket.path
  if (socket?.host !== undefined || socket?.port !== undefined)
    return `${String(socket.host ?? 'localhost')}:${String(socket.port ?? 6379)}`
  if (typeof options.url === 'string') {
    try {
      const url = new URL(options.url)
      return `${url.hostname || 'localhost'}:${url.port || 6379}`
    } catch {
      return undefined
    }
  }
  return undefined
}

// A node client that exists and is not ready (reconnecting, or destroyed by a topology change).
function notReady(client: unknown): boolean {
  if (client === null || typeof client !== 'object') return false
  if (typeof (client as { then?: unknown }).then === 'function') return false
  return (client as { isReady?: unknown }).isReady === false
}

export function nodeRedisDriver(client: NodeRedisClientLike): RedisDriver {
  const lastError = watchErrors(client)
  const options = (client as { options?: Options & { legacyMode?: unknown } }).options
  // node-redis 4's legacyMode turns the client's commands into callback style; the promise
  // ones are under `v4` (which throws when read on a client not in that mode).
  const commands =
    options?.legacyMode === true ? (client as unknown as { v4: NodeRedisClientLike }).v4 : client
  // node-redis queues commands while it reconnects (its offline queue, on by default), and
  // rejects them at once when closed: fail both at once, with a reason.
  const down = (): string | undefined => {
    if (!client.isOpen) return 'client closed (not connected, or disconnected)'
    if (!client.isReady && lastError.code !== undefined) return 'client reconnecting'
    return undefined
  }
  const waves = new Waves(down)
  const send = (args: string[]) => waves.send(() => commands.sendCommand(args))
  const address = addressOf(options) ?? 'Redis'
  watchConnected(client, () => !client.isOpen, address, CONNECT_IT)
  return {
    cluster: false,
    address,
    lastError,
    evalsha: (sha1, numkeys, args) => send(command('EVALSHA', sha1, numkeys, args)).then(numbers),
    eval: (source, numkeys, args) => send(command('EVAL', source, numkeys, args)).then(numbers),
    del: (keys) => send(['DEL', ...keys]),
    down,
    masterOf: () => undefined,
  }
}

type Cluster = NodeRedisClusterLike & { options?: Options; _options?: Options }

const CLUSTER_CLOSED = 'cluster client closed (not connected, or disconnected)'

// node-redis never connects by itself: the warning for a client still closed after start-up.
const CONNECT_IT =
  'node-redis connects only when told: call `await client.connect()` (a connecting client is fine).'

// The cluster in failure reports: its first seed nodes.
function clusterAddress(c: Cluster): string {
  const roots = (c.options ?? c._options)?.rootNodes ?? []
  const seeds = roots.map(addressOf).filter((a) => a !== undefined)
  return seeds.length > 0
    ? `the cluster seeded by ${seeds.slice(0, 3).join(', ')}${seeds.length > 3 ? ', ...' : ''}`
    : 'the Redis Cluster'
}

export function nodeRedisClusterDriver(cluster: NodeRedisClusterLike): RedisDriver {
  const lastError = watchErrors(cluster)
  const c = cluster as Cluster
  const masterNode = (slot: number): Node | undefined =>
    (c.slots[slot] as { master?: Node } | undefined)?.master
  // Why `master`'s connection cannot take a command now, or undefined.
  const downAt = (master: Node | undefined): string | undefined => {
    if (!cluster.isOpen) return CLUSTER_CLOSED
    return master !== undefined && notReady(master.client)
      ? `master ${String(master.address)} reconnecting`
      : undefined
  }
  // One Waves per master: node-redis writes to each master's connection on its own.
  const waves = new Map<string, Waves>()
  const wavesOf = (address: string): Waves => {
    let of = waves.get(address)
    if (of === undefined) {
      of = new Waves(() => downAt(c.masters.find((m) => m.address === address) as Node | undefined))
      waves.set(address, of)
    }
    return of
  }
  const probe = slotProbe(c, masterNode)
  const watches = new StallWatches()
  // `key` routes the command: node-redis sends it to the master of its slot. A master that
  // leaves its calls unanswered with its connection up (hung, not dead) is never `down`: while
  // it stays silent, the probe looks for the replica promoted in its place (see StallWatch).
  const send = (key: string, args: string[]): Promise<unknown> => {
    const slot = keySlot(key)
    const address = String(masterNode(slot)?.address ?? '')
    const sent = wavesOf(address).send(() => cluster.sendCommand(key, false, args))
    if (watches.of(address).track(sent)) probe(slot, address)
    return sent
  }
  const address = clusterAddress(c)
  watchConnected(cluster, () => !cluster.isOpen, address, CONNECT_IT)
  return {
    cluster: true,
    address,
    lastError,
    // The first key routes a script call (the store batches per slot).
    evalsha: (sha1, numkeys, args) =>
      send(String(args[0]), command('EVALSHA', sha1, numkeys, args)).then(numbers),
    eval: (source, numkeys, args) =>
      send(String(args[0]), command('EVAL', source, numkeys, args)).then(numbers),
    del: (keys) => send(keys[0] as string, ['DEL', ...keys]),
    down: (slot) => {
      const master = masterNode(slot)
      const down = downAt(master)
      // a master reconnecting: help the client find the replica that replaces it
      if (down !== undefined && down !== CLUSTER_CLOSED) probe(slot, String(master?.address))
      return down
    },
    masterOf: (slot) => {
      const address = masterNode(slot)?.address
      return typeof address === 'string' ? address : undefined
    },
  }
}

/**
 * node-redis 4 and 5 learn a new slot map only from a MOVED reply (6 also 5 s into a node's
 * reconnection attempts), and a command for a dead master's slot waits for that master. The
 * probe asks a live master about the slot (at most every 250 ms: one EXISTS), and when its MOVED
 * names another master, has the cluster client load the slot map again.
 */
function slotProbe(
  c: Cluster,
  masterNode: (slot: number) => Node | undefined,
): (slot: number, dead: string) => void {
  let probedAt = 0
  return (slot, dead) => {
    const now = Date.now()
    if (now - probedAt < PROBE_EVERY_MS) return
    probedAt = now
    const live = (c.masters as readonly Node[]).find(
      (m) =>
        m.address !== dead && (m.client as { isReady?: unknown } | undefined)?.isReady === true,
    )
    const liveClient = live?.client as NodeRedisClientLike | undefined
    if (live === undefined || liveClient === undefined) return
    const key = keyOfSlot(slot)
    liveClient.sendCommand(['EXISTS', key]).then(
      () => {},
      (error: unknown) => {
        const moved = /^MOVED \d+ (\S+)/.exec(error instanceof Error ? error.message : '')
        if (moved === null || moved[1] === dead) return
        // node-redis 5 and 6: load the slot map again from the live master.
        const slots = (c as { _slots?: { rediscover?: (from: unknown) => Promise<unknown> } })
          ._slots
        if (typeof slots?.rediscover === 'function') {
          slots.rediscover(liveClient).then(
            () => {},
            () => {},
          )
          return
        }
        // node-redis 4: routed by a key of the live master, about a key of the slot, a command
        // gets MOVED, which node-redis follows by loading the slot map again.
        let i = 0
        while (masterNode(clusterSlot(`n${i}`))?.address !== live.address && i < 10_000) i++
        c.sendCommand(`{n${i}}`, false, ['EXISTS', key]).then(
          () => {},
          () => {},
        )
      },
    )
  }
}

// A key in `slot`, for the probe: `{<n>}` for the first n that hashes there.
const SLOT_KEYS = new Map<number, string>()
function keyOfSlot(slot: number): string {
  let key = SLOT_KEYS.get(slot)
  if (key !== undefined) return key
  for (let i = 0; ; i++) {
    if (clusterSlot(`s${i}`) === slot) {
      key = `{s${i}}`
      break
    }
  }
  SLOT_KEYS.set(slot, key)
  return key
}
