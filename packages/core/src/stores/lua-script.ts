// The shape of an embedded Lua script.

/**
 * One assembled Redis script: its source, SHA-1 (for EVALSHA), how many ARGV slots each request
 * of a batch takes after the batch-wide ones (2: its cost, then its ticket), and whether each
 * decision in its reply ends with its module's fifth value (sliding-log: the time the admission
 * was recorded at, the ticket of an exact refund; concurrency: whether its lease was taken), and
 * whether its plain path reads a batch of distinct keys with one MGET when told they are.
 */
export interface LuaScript {
  readonly name: string
  readonly sha1: string
  readonly argsPerRequest: number
  readonly tickets: boolean
  readonly readsAhead: boolean
  readonly source: string
}
