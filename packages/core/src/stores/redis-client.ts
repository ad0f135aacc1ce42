// The Redis client a RedisStore drives: its shape, and how its errors read.
import { LimiterError } from '../common/errors.js'

/**
 * The part of an ioredis `Redis` or `Cluster` client (or iovalkey) the store uses. Checked by
 * shape, never with `instanceof`, so your copy of the client library may differ from ours.
 */
export interface RedisClientLike {
  evalsha(sha1: string, numkeys: number, ...args: Array<string | number>): Promise<unknown>
  eval(script: string, numkeys: number, ...args: Array<string | number>): Promise<unknown>
  del(...keys: string[]): Promise<unknown>
}

/**
 * The part of a node-redis client from `createClient()` (the `redis` package, 4, 5 or 6) the
 * store uses, connected by you (`await client.connect()`). Checked by shape.
 */
export interface NodeRedisClientLike {
  sendCommand(args: string[]): Promise<unknown>
  readonly isOpen: boolean
  readonly isReady: boolean
  on(event: 'error', listener: (error: Error) => void): unknown
}

/** The part of a node-redis cluster from `createCluster()` (redis 4, 5 or 6) the store uses. */
export interface NodeRedisClusterLike {
  sendCommand(
    firstKey: string | undefined,
    isReadonly: boolean | undefined,
    args: string[],
  ): Promise<unknown>
  readonly isOpen: boolean
  /** Per hash slot, its master (`address` is `host:port`). */
  readonly slots: ReadonlyArray<{ readonly master: { readonly address: string } } | undefined>
  readonly masters: ReadonlyArray<{ readonly address: string }>
  on(event: 'error', listener: (error: Error) => void): unknown
}

/** Any client a RedisStore accepts: ioredis (or iovalkey) `Redis` or `Cluster`, node-redis client or cluster. */
export type RedisStoreClient = RedisClientLike | NodeRedisClientLike | NodeRedisClusterLike

// A server without PEXPIRETIME (before Redis 7.0) fails every gcra-family and fixed-window
// script: say what to do instead of only relaying Redis's words.
export function tooOld(error: unknown): unknown {
  if (!(error instanceof Error) || !/unknown (redis )?command/i.test(error.message)) return error
  return new LimiterError(
    'ERR_LIMITER_STORE',
    `Redis refused a command the limiter's scripts need (PEXPIRETIME, SET ... PXAT): use Redis 7.0 or newer, or Valkey 7.2 or newer (${error.message})`,
    { cause: error },
  )
}

export function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT')
}

/** Whether `value` has the methods a {@link RedisStore} needs. */
export function isRedisClient(value: unknown): value is RedisStoreClient {
  return clientKind(value) !== undefined
}

/** Which library's shape `value` has: ioredis's, node-redis's client or cluster, or none. */
export function clientKind(
  value: unknown,
): 'ioredis' | 'node-redis' | 'node-redis-cluster' | undefined {
  if (value === null || typeof value !== 'object') return undefined
  const c = value as Record<string, unknown>
  // node-redis first: in node-redis 4's legacyMode a client also has ioredis-like `evalsha`,
  // `eval` and `del` (callback style); ioredis has no camel-case `evalSha`.
  if (typeof c.sendCommand === 'function' && typeof c.evalSha === 'function') {
    if ('masters' in c && 'slots' in c) return 'node-redis-cluster'
    if ('isReady' in c) return 'node-redis'
  }
  const ioredis =
    typeof c.evalsha === 'function' && typeof c.eval === 'function' && typeof c.del === 'function'
  return ioredis ? 'ioredis' : undefined
}

/** Where a client points, for error messages: `host:port`, a socket path, seed nodes, a Sentinel name. */
export function clientAddress(client: RedisClientLike): string {
  const c = client as {
    isCluster?: unknown
    startupNodes?: unknown
    options?: {
      host?: unknown
      port?: unknown
      path?: unknown
      sentinels?: unknown
      name?: unknown
    }
  }
  if (c.isCluster === true && Array.isArray(c.startupNodes)) {
    const nodes = (c.startupNodes as unknown[]).map((n) => {
      if (typeof n === 'object' && n !== null) {
        const { host = '127.0.0.1', port = 6379 } = n as { host?: unknown; port?: unknown }
        return `${String(host)}:${String(port)}`
      }
      return typeof n === 'number' ? `127.0.0.1:${n}` : String(n)
    })
    return `the cluster seeded by ${nodes.slice(0, 3).join(', ')}${nodes.length > 3 ? ', ...' : ''}`
  }
  const o = c.options
  if (o === undefined || o === null || typeof o !== 'object') return 'Redis'
  if (Array.isArray(o.sentinels) && o.sentinels.length > 0)
    return `Sentinel master ${JSON.stringify(String(o.name))}`
  if (typeof o.path === 'string' && o.path !== '') return o.path
  if (o.host !== undefined || o.port !== undefined)
    return `${String(o.host ?? 'localhost')}:${String(o.port ?? 6379)}`
  return 'Redis'
}

// The last connection error of each client, recorded by the one listener the store adds.
const LAST_ERRORS = new WeakMap<object, { code: string | undefined }>()

/**
 * Records `client`'s connection errors (one listener per client, however many stores share it),
 * so failures can name the last one; also stops ioredis printing "Unhandled error event" for a
 * client with no listener of its own. Returns the record, read at each failure.
 */
export function watchErrors(client: object): { readonly code: string | undefined } {
  let record = LAST_ERRORS.get(client)
  if (record !== undefined) return record
  const fresh: { code: string | undefined } = { code: undefined }
  record = fresh
  LAST_ERRORS.set(client, record)
  const events = client as unknown as { on?: (event: string, fn: (e: unknown) => void) => void }
  if (typeof events.on === 'function') {
    events.on('error', (error: unknown) => {
      fresh.code = errorCode(error)
    })
    // A client that connects again has no current error.
    events.on('ready', () => {
      fresh.code = undefined
    })
  }
  return record
}

/** A short code for a client error: its `code` (ECONNREFUSED) or a reply's first word (NOAUTH). */
export function errorCode(error: unknown): string | undefined {
  if (error === null || typeof error !== 'object') return undefined
  const { code, message } = error as { code?: unknown; message?: unknown }
  if (typeof code === 'string' && code !== '') return code
  if (typeof message !== 'string') return undefined
  const word = /^([A-Z][A-Z_]{2,})\b/.exec(message)
  return word?.[1]
}

// How long after a store is built its client may still be unopened without a warning: an app
// may build its limiters first and connect the client during its own start-up.
const CONNECT_GRACE_MS = 1000
// The clients already warned about: one warning per client, however many stores share it.
const NOT_CONNECTED = new WeakSet<object>()

/**
 * Warns once (`LIMITER_CLIENT_NOT_CONNECTED`) about a client that is `closed()` when a store is
 * built on it and still a second later: a node-redis client nobody called `connect()` on (or one already
 * closed), an ioredis client already quit. Every decision on it would fail (and answer from the
 * limiter's `failureMode`). A client connecting or reconnecting is not closed.
 */
export function watchConnected(
  client: object,
  closed: () => boolean,
  address: string,
  fix: string,
): void {
  // closed when the store is built, and still a second later: a client in use, quit later, is not
  if (!closed() || NOT_CONNECTED.has(client)) return
  setTimeout(() => {
    if (!closed() || NOT_CONNECTED.has(client)) return
    NOT_CONNECTED.add(client)
    process.emitWarning(
      `RedisStore: its Redis client (${address}) is not connected ${CONNECT_GRACE_MS / 1000} s after the store was built on it, so every decision fails and its limiters answer from their failureMode (by default, failing open: requests pass unlimited). ${fix} Silence it with --disable-warning=LIMITER_CLIENT_NOT_CONNECTED.`,
      { type: 'LimiterWarning', code: 'LIMITER_CLIENT_NOT_CONNECTED' },
    )
  }, CONNECT_GRACE_MS).unref()
}
