// RedisStore: decisions on any ioredis-compatible client (standalone or Cluster), batched per tick.
import { logTicket } from '../algorithms/sliding-log.js'
import { LimiterError, LimiterRangeError, LimiterTypeError } from '../errors.js'
import type { Algorithm, Policy } from '../policy.js'
import { clusterSlot } from './cluster-slot.js'
import type { LuaScript } from './lua-script.js'
import {
  clientAddress,
  errorCode,
  isNoScript,
  isRedisClient,
  type RedisClientLike,
  tooOld,
  watchErrors,
} from './redis-client.js'
import { baseKey, encodeTag } from './redis-keys.js'
import { SCRIPTS } from './scripts.generated.js'
import { type Store, type StoreCall, type StoreDecision, type StoreSink, SUBMIT } from './store.js'

export type { RedisClientLike } from './redis-client.js'

/** Options for {@link RedisStore}. */
export interface RedisStoreOptions {
  /** An ioredis `Redis` or `Cluster` client (or a compatible one). */
  readonly client: RedisClientLike
  /**
   * Decisions requested in the same event-loop turn go to Redis together, as one script call
   * per algorithm (per hash slot on a Cluster) of at most `maxSize` requests (default 32). A full
   * batch goes at once, so Redis decides it while this process gathers the next.
   * A batch never waits for later work. `false` sends each decision on its own.
   */
  readonly batch?: { readonly maxSize?: number } | false | undefined
}

// In clock-injected tests (injected times are >= 0) every expiry is moved this far: past real
// time by a day, so Redis never expires state the test's clock still considers live. One value
// per process, so scripts that keep state in a key's expiry read back exactly what they wrote.
const TEST_CLOCK_OFFSET_MS = Date.now() + 86_400_000

// The script of each algorithm: token-bucket and leaky-bucket make GCRA's decisions (see TWINS)
// and run its script, under their own key names.
const SCRIPT_OF: Readonly<Record<Algorithm, LuaScript>> = {
  ...SCRIPTS,
  'token-bucket': SCRIPTS.gcra,
  'leaky-bucket': SCRIPTS.gcra,
}

// The batch group of each policy, built once (policies are frozen and live as long as limiters).
const GROUPS = new WeakMap<Policy, string>()

// The decisions gathered for one policy (and slot): parallel arrays, so queueing a decision
// allocates nothing of its own. `ops[i]` is 'c' (consume) or 'r' (refund).
class Batch {
  readonly calls: StoreCall[] = []
  readonly keys: string[] = []
  readonly ops: Array<'c' | 'r'> = []
  readonly sinks: StoreSink[] = []
  // Only consumes of cost 1 so far: such a batch sends no per-request ARGV.
  plain = true

  add(call: StoreCall, op: 'c' | 'r', key: string, sink: StoreSink): void {
    this.calls.push(call)
    this.keys.push(key)
    this.ops.push(op)
    this.sinks.push(sink)
    if (op === 'r' || call.cost !== 1) this.plain = false
  }
}

/**
 * A store on Redis. Each decision is decided by the algorithm's Lua script, atomically; the
 * decisions of one event-loop turn travel together in one EVALSHA per algorithm (EVAL once on
 * NOSCRIPT, which caches the script again). Time comes from Redis `TIME`, so app servers with
 * skewed clocks agree. The client's settings and commands are never modified; a client with
 * no `error` listener gets a silent one, so an outage does not print a line per reconnect.
 *
 * @example
 * const store = new RedisStore({ client: new Redis(process.env.REDIS_URL) })
 */
export class RedisStore implements Store {
  readonly client: RedisClientLike
  /** Where the client points (`host:port`, a Cluster's seed nodes, a Sentinel master), for errors. */
  readonly address: string
  readonly #lastError: { readonly code: string | undefined }
  readonly #maxBatch: number
  readonly #cluster: boolean
  #queue = new Map<string, Batch>()
  #scheduled = false
  #lastKey = ''
  #lastTag = ''
  #lastSlot = -1

  constructor(options: RedisStoreOptions) {
    const client = (options as { client?: unknown } | undefined)?.client
    if (!isRedisClient(client)) {
      throw new LimiterTypeError(
        'client',
        client,
        'an ioredis Redis or Cluster client (with evalsha, eval and del)',
      )
    }
    const batch = options.batch
    const maxBatch = batch === false ? 1 : (batch?.maxSize ?? 32)
    if (!Number.isInteger(maxBatch) || maxBatch < 1 || maxBatch > 1000) {
      throw new LimiterRangeError('batch.maxSize', maxBatch, 'must be an integer from 1 to 1000')
    }
    this.client = client
    this.#maxBatch = maxBatch
    this.#cluster = (client as { isCluster?: unknown }).isCluster === true
    // ioredis prints "Unhandled error event" for every failed reconnect when a client has no
    // error listener: one line per attempt for the whole outage. The limiter reports failures
    // through onError instead; the store's listener also keeps the last error for that report.
    this.#lastError = watchErrors(client)
    this.address = clientAddress(client)
  }

  /**
   * The circuit-breaker scope of a call: on a Cluster, the master serving the key's slot
   * (`host:port` from the client's slot map, which follows failovers), or `slot:<n>` while the
   * map does not know it; on a single Redis, the one server (`''`).
   */
  failureDomain(call: Omit<StoreCall, 'cost'>): string {
    if (!this.#cluster) return ''
    const slot = this.#slotOf(call.key)
    const slots = (this.client as { slots?: ReadonlyArray<readonly unknown[] | undefined> }).slots
    const master = slots?.[slot]?.[0]
    return typeof master === 'string' ? master : `slot:${slot}`
  }

  consume(call: StoreCall): Promise<StoreDecision> {
    return new Promise((resolve, reject) =>
      this.#enqueue(call, 'c', { resolve: resolve as (value: unknown) => void, reject }),
    )
  }

  refund(call: StoreCall): Promise<void> {
    return new Promise((resolve, reject) => this.#enqueue(call, 'r', { resolve, reject }))
  }

  /** Internal: the limiter's entry point, settling its guard entry directly. */
  [SUBMIT](call: StoreCall, op: 'c' | 'r', sink: StoreSink): void {
    this.#enqueue(call, op, sink)
  }

  async reset(call: Omit<StoreCall, 'cost'>): Promise<void> {
    await this.client.del(baseKey(call.namespace, this.#tagOf(call.key)))
  }

  #enqueue(call: StoreCall, op: 'c' | 'r', sink: StoreSink): void {
    // A disconnected ioredis client queues commands until it reconnects (its offline queue):
    // fail at once instead, so nothing piles up during an outage and nothing stale runs later.
    const status = (this.client as { status?: unknown }).status
    if (status === 'reconnecting' || status === 'close' || status === 'end') {
      sink.reject(this.#failure(`is unreachable (client ${status})`, undefined))
      return
    }
    const key = baseKey(call.namespace, this.#tagOf(call.key))
    // Clock-injected calls (tests) carry their own time, so they travel alone.
    if (this.#maxBatch === 1 || call.nowMs !== undefined) {
      const alone = new Batch()
      alone.add(call, op, key, sink)
      this.#send(SCRIPT_OF[call.policy.algorithm], alone)
      return
    }
    // One script call carries one policy: its numbers travel once per batch.
    const { policy } = call
    let group = GROUPS.get(policy)
    if (group === undefined) {
      group = `${policy.algorithm}:${policy.limit}:${policy.windowMs}:${policy.burst}`
      GROUPS.set(policy, group)
    }
    if (this.#cluster) group = `${group}:${this.#slotOf(call.key)}`
    let batch = this.#queue.get(group)
    if (batch === undefined) {
      batch = new Batch()
      this.#queue.set(group, batch)
    }
    batch.add(call, op, key, sink)
    // A full batch goes now: Redis starts on it while this turn is still gathering the next.
    if (batch.calls.length === this.#maxBatch) {
      this.#queue.delete(group)
      this.#send(SCRIPT_OF[policy.algorithm], batch)
      return
    }
    if (!this.#scheduled) {
      this.#scheduled = true
      setImmediate(this.#flush)
    }
  }

  // A store failure that says where the store is and the client's last connection error.
  #failure(what: string, cause: unknown): LimiterError {
    const clientError = this.#lastError.code ?? errorCode(cause)
    const last = clientError === undefined ? '' : ` (last error: ${clientError})`
    return new LimiterError('ERR_LIMITER_STORE', `Redis at ${this.address} ${what}${last}`, {
      cause,
      address: this.address,
      clientError,
    })
  }

  // The limiter asks failureDomain, then consume, about the same key: encode it once.
  #tagOf(key: string): string {
    if (key !== this.#lastKey) {
      this.#lastTag = encodeTag(key)
      this.#lastKey = key
      this.#lastSlot = -1
    }
    return this.#lastTag
  }

  // Likewise the Cluster slot: failureDomain and the batch grouping ask for it in turn.
  #slotOf(key: string): number {
    const tag = this.#tagOf(key)
    if (this.#lastSlot < 0) this.#lastSlot = clusterSlot(tag)
    return this.#lastSlot
  }

  readonly #flush = (): void => {
    this.#scheduled = false
    const queue = this.#queue
    this.#queue = new Map()
    // A batch that filled up has gone already: what is left is smaller than maxSize.
    for (const batch of queue.values())
      this.#send(SCRIPT_OF[(batch.calls[0] as StoreCall).policy.algorithm], batch)
  }

  // Sends the batch as one script call.
  #send(script: LuaScript, batch: Batch): void {
    const { calls, ops, sinks } = batch
    const first = calls[0] as StoreCall
    const { policy } = first
    const n = calls.length
    // KEYS (one per request), then ARGV
    const args: Array<string | number> = [...batch.keys]
    args.push(
      first.nowMs === undefined ? '' : first.nowMs,
      first.nowMs === undefined ? 0 : TEST_CLOCK_OFFSET_MS,
      policy.limit,
      policy.windowMs,
      policy.burst,
    )
    // The common batch, consumes of cost 1, sends no per-request ARGV at all.
    const withTicket = script.tickets
    if (!batch.plain) {
      for (let i = 0; i < n; i++) {
        const call = calls[i] as StoreCall
        // A refund travels as minus its cost.
        args.push(ops[i] === 'r' ? -call.cost : call.cost)
        if (withTicket) args.push(call.ticket ?? '')
      }
    }
    // Per consume, in order: `remaining, reset` when allowed, `-1 - remaining, reset, retry`
    // when refused, then sliding-log's admission time (-1 if none), which with the request's cost
    // is the ticket a refund takes back; refunds reply nothing.
    const deliver = (reply: unknown): void => {
      const values = reply as readonly number[]
      let at = 0
      for (let i = 0; i < n; i++) {
        const sink = sinks[i] as StoreSink
        if (ops[i] === 'r') {
          sink.resolve(undefined)
          continue
        }
        const head = values[at] as number
        const allowed = head >= 0
        const resetMs = values[at + 1] as number
        let retryAfterMs = 0
        at += 2
        if (!allowed) retryAfterMs = values[at++] as number
        let ticket: string | undefined
        if (withTicket) {
          const atMs = values[at++] as number
          if (atMs >= 0) ticket = logTicket(atMs, (calls[i] as StoreCall).cost)
        }
        const remaining = allowed ? head : -1 - head
        if (sink.decided !== undefined)
          sink.decided(allowed, remaining, resetMs, retryAfterMs, ticket)
        else sink.resolve({ allowed, remaining, resetMs, retryAfterMs, ticket })
      }
    }
    const fail = (error: unknown): void => {
      const old = tooOld(error)
      const reason =
        old instanceof LimiterError
          ? old
          : this.#failure(
              `failed: ${error instanceof Error ? error.message : String(error)}`,
              error,
            )
      for (const sink of sinks) sink.reject(reason)
    }
    this.client.evalsha(script.sha1, n, ...args).then(deliver, (error: unknown) => {
      if (!isNoScript(error)) return fail(error)
      // EVAL runs the script and caches it again; the next call's EVALSHA finds it.
      this.client.eval(script.source, n, ...args).then(deliver, fail)
    })
  }
}
