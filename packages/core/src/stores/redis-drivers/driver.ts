// The one interface RedisStore drives, whatever the client library: see ioredis.ts, node-redis.ts.

/** What the store needs from a client, whichever library it comes from. */
export interface RedisDriver {
  /** A Cluster client: the store batches per hash slot and keeps one circuit per master. */
  readonly cluster: boolean
  /** Where the client points (`host:port`, a socket path, a Cluster's seed nodes), for errors. */
  readonly address: string
  /** The client's last connection error (`ECONNREFUSED`), cleared when it is ready again. */
  readonly lastError: { readonly code: string | undefined }
  /** EVALSHA: `args` holds the `numkeys` keys first, then the script's ARGV. */
  evalsha(sha1: string, numkeys: number, args: Array<string | number>): Promise<unknown>
  /** EVAL, the same way (after NOSCRIPT: it caches the script again). */
  eval(source: string, numkeys: number, args: Array<string | number>): Promise<unknown>
  /** DEL of keys in one slot. */
  del(keys: string[]): Promise<unknown>
  /**
   * Why the server of `slot` (-1 on a single Redis) cannot take a command right now
   * (`client reconnecting`), or undefined: the store fails such calls at once instead of
   * letting them wait in the client's offline queue.
   */
  down(slot: number): string | undefined
  /** The Cluster master serving `slot` as the client sees it now (`host:port`), if it knows. */
  masterOf(slot: number): string | undefined
}
