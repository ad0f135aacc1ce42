// RedisStore: decisions on an ioredis or node-redis client (standalone or Cluster), batched per tick.
import { reservationTicket } from '../algorithms/gcra.js'
import { logTicket } from '../algorithms/sliding-log.js'
import { monotonicMs } from '../common/clock.js'
import { LimiterError, LimiterRangeError, LimiterTypeError } from '../common/errors.js'
import { knownOptions, NO_HINTS, type ScopeHints, STORE_HINTS } from '../common/option-names.js'
import type { PolicySet } from '../policies/limits.js'
import { STATE_CODE } from '../policies/naming.js'
import { type Algorithm, capacityArg, type Policy } from '../policies/policy.js'
import { clusterSlot } from './cluster-slot.js'
import { allDistinct } from './distinct-tags.js'
import { consumeTicket } from './leases.js'
import type { LuaScript } from './lua-script.js'
import { packedNamespace } from './packed-set.js'
import { errorCode, isNoScript, type RedisStoreClient, tooOld } from './redis-client.js'
import { CLIENT_EXPECTED, driverOf, type RedisDriver } from './redis-drivers/index.js'
import { baseKey, blockedMarker, encodeTag } from './redis-keys.js'
import { SCRIPTS } from './scripts.generated.js'
import {
  DECIDES_SETS,
  type Store,
  type StoreCall,
  type StoreDecision,
  type StoreOp,
  type StoreSink,
  SUBMIT,
} from './store.js'

export type {
  NodeRedisClientLike,
  NodeRedisClusterLike,
  RedisClientLike,
  RedisStoreClient,
} from './redis-client.js'

/** Options for {@link RedisStore}. */
export interface RedisStoreOptions {
  /**
   * An ioredis `Redis` or `Cluster` client (or iovalkey's), or a connected node-redis client
   * from `createClient()` or cluster from `createCluster()` (the `redis` package, 4, 5 or 6).
   */
  readonly client: RedisStoreClient
  /**
   * Decisions requested in the same event-loop turn go to Redis together, as one script call
   * per algorithm (per hash slot on a Cluster) of at most `maxSize` requests (default 128). A
   * batch goes at once when it holds as many decisions as this store already awaits from Redis
   * (at least 32, at most `maxSize`), so Redis decides it while this process gathers the next.
   * A batch never waits for later work. `false` sends each decision on its own.
   */
  readonly batch?: { readonly maxSize?: number } | false | undefined
}

const REDIS_STORE_OPTIONS: ReadonlySet<string> = new Set(['client', 'batch'])
const BATCH_OPTIONS: ReadonlySet<string> = new Set(['maxSize'])
// Peer stores' names: rate-limit-redis's `sendCommand` and `resetExpiryOnChange`,
// rate-limiter-flexible's `storeClient` and `useRedisPackage` (see STORE_HINTS for the rest).
const REDIS_STORE_HINTS: ScopeHints = new Map([
  ...STORE_HINTS,
  ['storeClient', 'client'],
  ['redis', 'client'],
  [
    'sendCommand',
    'pass the Redis client itself as `client` (ioredis, or a connected node-redis client): the store sends its own commands, scripts and batches',
  ],
  [
    'resetExpiryOnChange',
    "there is no such option: each algorithm's script sets its keys' expiry on every write, to when the key is back to empty",
  ],
  [
    'useRedisPackage',
    'there is no such option: the client is recognised by its shape, ioredis or node-redis',
  ],
])

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

// A key's block lives beside its (first policy's) state key: outside the `{tag}`, so the same
// Cluster slot (lua/lib/block.lua derives the same name).
const BLOCK_SUFFIX = ':block'

// The batch group of each policy under each namespace, built once (policies are frozen and live as
// long as limiters): one script call carries one policy's decisions on one namespace's keys, so
// the batch has one block marker (lua/lib/block.lua), that namespace's.
// A policy's group under the first namespace it met (the usual: one limiter per policy), and
// under any other in `others`.
interface Groups {
  readonly namespace: string
  readonly group: string
  others: Map<string, string> | undefined
}
const GROUPS = new WeakMap<Policy, Groups>()

// What every call of one policy set shares, worked out once per set: its batch group, its script,
// and the namespace of its one state key (undefined: one key per policy).
interface SetPlan {
  readonly group: string
  readonly script: LuaScript
  readonly packed: string | undefined
}
const PLANS = new WeakMap<PolicySet, SetPlan>()

function planOf(set: PolicySet): SetPlan {
  let plan = PLANS.get(set)
  if (plan === undefined) {
    const packed = packedNamespace(set)
    const script = packed === undefined ? SCRIPTS.limits : SCRIPTS['packed-limits']
    plan = { group: `L${set.id}`, script, packed }
    PLANS.set(set, plan)
  }
  return plan
}

// The decisions gathered for one policy (and slot): parallel arrays, so queueing a decision
// allocates nothing of its own. `ops[i]`: see StoreOp. `leases[i]`: a concurrency consume's new
// lease (several policies: one per policy, '' for the others, joined by ',').
class Batch {
  /** The block marker of the batch's keys (see blockHost): its script's last key. */
  readonly marker: string
  readonly calls: StoreCall[] = []
  readonly keys: string[] = []
  readonly ops: StoreOp[] = []
  readonly sinks: StoreSink[] = []
  readonly leases: string[] = []
  /** Each request's encoded hash tag (see encodeTag). */
  readonly tags: string[] = []
  // Only consumes of cost 1 without leases so far: such a batch sends no per-request ARGV.
  plain = true

  constructor(marker: string) {
    this.marker = marker
  }

  // `tag`: the user key's encoded hash tag (see encodeTag).
  add(call: StoreCall, op: StoreOp, tag: string, sink: StoreSink): void {
    this.calls.push(call)
    const { set } = call
    let lease = ''
    if (set === undefined) {
      this.keys.push(baseKey(call.namespace, tag))
      if (op === 'c') lease = consumeTicket(call.policy, call.cost, call.rank, call.waitMs)
    } else {
      const { packed } = planOf(set)
      // the set's one key, or one key per policy: the namespace of each, the same hash tag
      if (packed !== undefined) this.keys.push(baseKey(packed, tag))
      else for (const namespace of set.namespaces) this.keys.push(baseKey(namespace, tag))
      if (op === 'c' && (set.leases || call.waitMs !== undefined)) lease = setTickets(set, call)
    }
    this.tags.push(tag)
    this.leases.push(lease)
    this.ops.push(op)
    this.sinks.push(sink)
    if (op !== 'c' || call.cost !== 1 || lease !== '') this.plain = false
  }
}

// A consume's tickets under several policies, joined by ',' (all '' is sent as ''): each
// concurrency policy's new lease, each waiting gcra policy's wait cap (see consumeTicket).
function setTickets(set: PolicySet, call: StoreCall): string {
  const { cost, rank, waitMs } = call
  const tickets = set.policies.map((p) => consumeTicket(p, cost, rank, waitMs))
  return tickets.every((t) => t === '') ? '' : tickets.join(',')
}

/** The `batch.maxSize` default: most decisions per script call. */
const MAX_BATCH = 128
/**
 * A batch goes once it holds as many decisions as the store awaits from Redis, and at least
 * this many (or `maxSize`, if less): with few decisions in flight, two or more batches of 32
 * keep Redis and this process working side by side (at 64 in flight, about 1.8 times the
 * decisions/s of batches of 100 sent at the end of the turn); with many, a batch as large as
 * what is out costs Redis less per decision (at 256 in flight, gcra on 10k keys: about 1.12
 * times the decisions/s of batches of 32, Redis CPU 2.45 -> 2.1 µs per decision).
 */
const MIN_FULL_BATCH = 32

// The `batch` option's most decisions per script call: 1 for `false`, MAX_BATCH by default.
function maxBatchOf(batch: RedisStoreOptions['batch']): number {
  if (batch === false) return 1
  if (batch !== undefined && (batch === null || typeof batch !== 'object' || Array.isArray(batch)))
    throw new LimiterTypeError('batch', batch, 'an object { maxSize? } or false')
  const maxBatch =
    batch === undefined
      ? MAX_BATCH
      : (knownOptions(batch, BATCH_OPTIONS, 'batch.', NO_HINTS).maxSize ?? MAX_BATCH)
  if (!Number.isInteger(maxBatch) || maxBatch < 1 || maxBatch > 1000) {
    throw new LimiterRangeError('batch.maxSize', maxBatch, 'must be an integer from 1 to 1000')
  }
  return maxBatch
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
  readonly [DECIDES_SETS] = true
  readonly client: RedisStoreClient
  /** Where the client points (`host:port`, a Cluster's seed nodes, a Sentinel master), for errors. */
  readonly address: string
  readonly #driver: RedisDriver
  readonly #maxBatch: number
  readonly #cluster: boolean
  #queue = new Map<string, Batch>()
  #scheduled = false
  /** Decisions sent to Redis and not answered yet. */
  #out = 0
  // Until when (monotonic ms) give-backs travel in script calls of their own: for a while after
  // a call failed for `maxmemory`. Redis checks memory only up to a script's first write, so a
  // release first in a call let its consumes grow a Redis at its limit, and a consume's refused
  // write failed the releases beside it. Apart, releases free memory and consumes fail (followed
  // by failureMode). Mixed, as usual, they cost one call where apart they cost two.
  #oomUntil = 0
  #lastKey = ''
  #lastTag = ''
  #lastSlot = -1

  constructor(options: RedisStoreOptions) {
    // a peer's `prefix` is refused: ignored, it would let two apps on one Redis share counters
    const { client, batch } = knownOptions(options, REDIS_STORE_OPTIONS, '', REDIS_STORE_HINTS)
    // One driver per client shape, picked once: ioredis, node-redis (see redis-drivers/).
    const driver = driverOf(client)
    if (driver === undefined) throw new LimiterTypeError('client', client, CLIENT_EXPECTED)
    const maxBatch = maxBatchOf(batch)
    this.client = client as RedisStoreClient
    this.#maxBatch = maxBatch
    this.#driver = driver
    this.#cluster = driver.cluster
    this.address = driver.address
  }

  /**
   * The circuit-breaker scope of a call: on a Cluster, the master serving the key's slot
   * (`host:port` from the client's slot map, which follows failovers), or `slot:<n>` while the
   * map does not know it; on a single Redis, the one server (`''`).
   */
  failureDomain(call: Omit<StoreCall, 'cost'>): string {
    if (!this.#cluster) return ''
    const slot = this.#slotOf(call.key)
    return this.#driver.masterOf(slot) ?? `slot:${slot}`
  }

  consume(call: StoreCall): Promise<StoreDecision> {
    return new Promise((resolve, reject) =>
      this.#enqueue(call, 'c', { resolve: resolve as (value: unknown) => void, reject }),
    )
  }

  refund(call: StoreCall): Promise<void> {
    return new Promise((resolve, reject) => this.#enqueue(call, 'r', { resolve, reject }))
  }

  release(call: StoreCall): Promise<void> {
    return new Promise((resolve, reject) => this.#enqueue(call, 'l', { resolve, reject }))
  }

  /** A penalty (see `Store.penalize`): batched with the key's other decisions. */
  penalize(call: StoreCall): Promise<StoreDecision | StoreDecision[]> {
    return new Promise((resolve, reject) =>
      this.#enqueue(call, 'p', { resolve: resolve as (value: unknown) => void, reject }),
    )
  }

  /**
   * Blocks a key (see `Store.block`): one key beside its (first policy's, or its set's one)
   * state key, same hash tag, expiring when the block ends by Redis time (lua/block.lua).
   */
  async block(call: Omit<StoreCall, 'cost'>, durationMs: number): Promise<number> {
    const down = this.#driver.down(this.#cluster ? this.#slotOf(call.key) : -1)
    if (down !== undefined) throw this.#failure(`is unreachable (${down})`, undefined)
    this.#sendQueued()
    const key = `${baseKey(blockHost(call), this.#tagOf(call.key))}${BLOCK_SUFFIX}`
    const test = call.nowMs !== undefined
    const marker = this.#markerOf(call)
    const args = [key, marker, call.nowMs ?? '', test ? TEST_CLOCK_OFFSET_MS : 0, durationMs]
    const { sha1, source } = SCRIPTS.block
    try {
      const left = await this.#driver
        .evalsha(sha1, 2, args)
        .catch((error: unknown) =>
          isNoScript(error) ? this.#driver.eval(source, 2, args) : Promise.reject(error),
        )
      return Number(left)
    } catch (error) {
      const old = tooOld(error)
      if (old instanceof LimiterError) throw old
      const message = error instanceof Error ? error.message : String(error)
      throw this.#failure(`failed: ${message}`, error)
    }
  }

  /** Internal: the limiter's entry point, settling its guard entry directly. */
  [SUBMIT](call: StoreCall, op: StoreOp, sink: StoreSink): void {
    this.#enqueue(call, op, sink)
  }

  async reset(call: Omit<StoreCall, 'cost'>): Promise<void> {
    const tag = this.#tagOf(call.key)
    const namespaces = call.set?.namespaces ?? [call.namespace]
    // one DEL (the block too): a key's policies share its hash tag, so one Cluster slot
    const keys = namespaces.map((namespace) => baseKey(namespace, tag))
    keys.push(`${keys[0]}${BLOCK_SUFFIX}`)
    // a set whose states share one key: that key and its block (and any left by the layout of
    // one key per policy, before it)
    const packed = call.set === undefined ? undefined : packedNamespace(call.set)
    if (packed !== undefined)
      keys.push(baseKey(packed, tag), `${baseKey(packed, tag)}${BLOCK_SUFFIX}`)
    this.#sendQueued()
    try {
      await this.#driver.del(keys)
    } catch (error) {
      // named as every other call's failure is: `Redis at host:port`, with `error.address`
      const message = error instanceof Error ? error.message : String(error)
      throw this.#failure(`failed: ${message}`, error)
    }
  }

  // A reset or a block goes after the decisions this turn asked for before it (they wait in
  // their batches for the end of the turn): send those first, on the same connection.
  #sendQueued(): void {
    if (this.#queue.size > 0) this.#flush()
  }

  #enqueue(call: StoreCall, op: StoreOp, sink: StoreSink): void {
    // A disconnected client queues commands until it reconnects (its offline queue): fail at
    // once instead, so nothing piles up during an outage and nothing stale runs later.
    const down = this.#driver.down(this.#cluster ? this.#slotOf(call.key) : -1)
    if (down !== undefined) {
      sink.reject(this.#failure(`is unreachable (${down})`, undefined))
      return
    }
    const tag = this.#tagOf(call.key)
    // Clock-injected calls (tests) carry their own time, so they travel alone.
    if (this.#maxBatch === 1 || call.nowMs !== undefined) {
      const alone = new Batch(this.#markerOf(call))
      alone.add(call, op, tag, sink)
      this.#send(scriptOf(call), alone)
      return
    }
    // One script call carries one policy (or one set of policies): its numbers travel once.
    // While Redis is out of memory, give-backs travel apart from decisions (see #oomUntil)
    let group =
      (op === 'r' || op === 'l') && this.#oomUntil > 0 && this.#apart()
        ? `${groupOf(call)}|give`
        : groupOf(call)
    if (this.#cluster) group = `${group}:${this.#slotOf(call.key)}`
    let batch = this.#queue.get(group)
    if (batch === undefined) {
      batch = new Batch(this.#markerOf(call))
      this.#queue.set(group, batch)
    }
    batch.add(call, op, tag, sink)
    // A full batch goes now: Redis starts on it while this turn is still gathering the next.
    if (batch.calls.length >= Math.min(this.#maxBatch, Math.max(MIN_FULL_BATCH, this.#out))) {
      this.#queue.delete(group)
      this.#send(scriptOf(call), batch)
      return
    }
    if (!this.#scheduled) {
      this.#scheduled = true
      setImmediate(this.#flush)
    }
  }

  // A store failure that says where the store is and the client's last connection error.
  #failure(what: string, cause: unknown): LimiterError {
    const clientError = this.#driver.lastError.code ?? errorCode(cause)
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

  // The block marker of a call's block (see blockHost): on a Cluster, its slot's.
  #markerOf(call: Omit<StoreCall, 'cost'>): string {
    return blockedMarker(blockHost(call), this.#cluster ? this.#slotOf(call.key) : undefined)
  }

  readonly #flush = (): void => {
    this.#scheduled = false
    const queue = this.#queue
    this.#queue = new Map()
    // A batch that filled up has gone already: what is left is smaller than maxSize.
    for (const batch of queue.values()) {
      this.#send(scriptOf(batch.calls[0] as StoreCall), batch)
    }
  }

  // Whether give-backs travel apart now (the window after an out-of-memory failure).
  #apart(): boolean {
    if (monotonicMs() < this.#oomUntil) return true
    this.#oomUntil = 0
    return false
  }

  // Sends the batch as one script call: KEYS, the time, then the script's own ARGV.
  #send(script: LuaScript, batch: Batch): void {
    const first = batch.calls[0] as StoreCall
    const { set } = first
    // KEYS: each request's, then the block marker (lua/lib/block.lua)
    const args: Array<string | number> = [...batch.keys, batch.marker]
    args.push(
      clockArg(batch, script, first.nowMs),
      first.nowMs === undefined ? 0 : TEST_CLOCK_OFFSET_MS,
    )
    for (const arg of set === undefined
      ? policyArgs(batch, first.policy, script)
      : setArgs(batch, set))
      args.push(arg)
    const keys = batch.keys.length + 1
    const sent = batch.calls.length
    this.#out += sent
    const deliver = (reply: unknown): void => {
      this.#out -= sent
      if (set === undefined)
        deliverOne(batch, reply as readonly number[], script.tickets, first.policy.limit)
      else deliverSet(batch, reply as readonly number[])
    }
    const fail = (error: unknown): void => {
      this.#out -= sent
      if (isOutOfMemory(error)) this.#oomUntil = monotonicMs() + OOM_APART_MS
      const old = tooOld(error)
      const reason =
        old instanceof LimiterError
          ? old
          : this.#failure(
              `failed: ${error instanceof Error ? error.message : String(error)}`,
              error,
            )
      for (const sink of batch.sinks) sink.reject(reason)
    }
    this.#driver.evalsha(script.sha1, keys, args).then(deliver, (error: unknown) => {
      if (!isNoScript(error)) return fail(error)
      // EVAL runs the script and caches it again; the next call's EVALSHA finds it.
      this.#driver.eval(script.source, keys, args).then(deliver, fail)
    })
  }
}

/** How long give-backs travel apart after an out-of-memory failure (see RedisStore's #oomUntil). */
const OOM_APART_MS = 10_000

// Whether Redis refused a call for `maxmemory` (`OOM command not allowed ...`).
function isOutOfMemory(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('OOM ')
}

// ARGV[1], the batch's time: '' (Redis TIME) or a test's clock, after a 'u' when the script's plain
// path can read the keys first (one MGET instead of a GET per key) and no key repeats: a batch of
// two or more consumes of cost 1 whose hash tags are distinct (lua/lib/time.lua). A key is its
// namespace, then its tag in braces, and a tag holds no brace: keys of distinct tags are distinct
// whatever their namespaces (the same tag under two namespaces just reads each key in turn).
function clockArg(batch: Batch, script: LuaScript, nowMs: number | undefined): string {
  const clock = nowMs === undefined ? '' : String(nowMs)
  const { tags } = batch
  if (!script.readsAhead || !batch.plain || tags.length < 2) return clock
  return allDistinct(tags) ? `u${clock}` : clock
}

// The script that decides a call: its algorithm's, `limits` for several policies, or
// `packed-limits` for several whose states share one key.
function scriptOf(call: StoreCall): LuaScript {
  const { set } = call
  return set === undefined ? SCRIPT_OF[call.policy.algorithm] : planOf(set).script
}

// The batch group of a call: its policy's numbers and namespace (or its set of policies).
function groupOf(call: StoreCall): string {
  if (call.set !== undefined) return planOf(call.set).group
  const { policy, namespace } = call
  const groups = GROUPS.get(policy)
  if (groups?.namespace === namespace) return groups.group
  let group = groups?.others?.get(namespace)
  if (group === undefined) {
    const { algorithm, limit, windowMs } = policy
    group = `${algorithm}:${limit}:${windowMs}:${capacityArg(policy)}:${namespace}`
    if (groups === undefined) GROUPS.set(policy, { namespace, group, others: undefined })
    else {
      groups.others ??= new Map()
      groups.others.set(namespace, group)
    }
  }
  return group
}

// The namespace of the key that holds a call's block: its policy's, or its set's first policy's
// (its one key's, for a set whose states share one key).
function blockHost(call: Omit<StoreCall, 'cost'>): string {
  const packed = call.set === undefined ? undefined : packedNamespace(call.set)
  return packed ?? call.namespace
}

// A one-policy script's ARGV after the time: the policy, then per request its cost (a refund as
// minus its cost) and, for a script that takes two per request, its ticket (a refund's: a
// sliding-log record, a gcra reservation; a concurrency lease); the common batch, consumes of
// cost 1, sends no per-request ARGV at all.
function policyArgs(batch: Batch, policy: Policy, script: LuaScript): Array<string | number> {
  const args: Array<string | number> = [policy.limit, policy.windowMs, capacityArg(policy)]
  if (batch.plain) return args
  const { calls, ops, leases } = batch
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i] as StoreCall
    // a one-policy release is its concurrency policy's refund (of the lease its ticket names)
    const op = ops[i]
    const consume = op === 'c'
    if (op === 'p') args.push(`p${call.cost}`)
    else args.push(consume ? call.cost : -Math.max(1, call.cost))
    if (script.argsPerRequest === 2)
      args.push(consume ? (leases[i] as string) : op === 'p' ? '' : (call.ticket ?? ''))
  }
  return args
}

// The `limits` script's ARGV after the time: the policies, then per request its cost and a
// refund's tickets (see lua/lib/limits.lua).
function setArgs(batch: Batch, set: PolicySet): Array<string | number> {
  const args: Array<string | number> = [set.policies.length]
  for (const p of set.policies)
    args.push(STATE_CODE[p.algorithm], p.limit, p.windowMs, capacityArg(p))
  // the common batch, consumes of cost 1, sends no per-request ARGV
  if (batch.plain) return args
  const { calls, ops, leases } = batch
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i] as StoreCall
    const op = ops[i]
    if (op === 'c') args.push(call.cost, leases[i] as string)
    else if (op === 'p') args.push(`p${call.cost}`, '')
    else args.push(op === 'l' ? 'l' : -call.cost, (call.tickets ?? []).join(','))
  }
  return args
}

// One decision of a reply (lua/lib/reply.lua): `remaining, reset` when allowed, `remaining,
// -1 - delay, reset` and the reservation's ticket (gcra's `tat_ms, tat_frac, moved`; -1s for a
// peek) when allowed after a wait, `-1 - remaining, reset, retry` when refused; then, with
// tickets, the module's fifth value: sliding-log's admission time (with the request's cost,
// the ticket a refund takes back), or 1 when concurrency's `lease` was taken (-1: none).
// `limit`: the policy's (a reservation's ticket names it). It goes to `out[slot]` when given,
// else to `sink`. Returns where the next one starts.
function readDecision(
  values: readonly number[],
  at: number,
  cost: number,
  limit: number,
  tickets: boolean,
  lease: string,
  sink: StoreSink | undefined,
  out: StoreDecision[] | undefined,
  slot = 0,
): number {
  const head = values[at] as number
  const allowed = head >= 0
  let resetMs = values[at + 1] as number
  let retryAfterMs = 0
  let delayMs = 0
  let next = at + 2
  let ticket: string | undefined
  if (!allowed) retryAfterMs = values[next++] as number
  else if (resetMs < 0) {
    delayMs = -1 - resetMs
    resetMs = values[next] as number
    const tatMs = values[next + 1] as number
    if (tatMs >= 0)
      ticket = reservationTicket(
        limit,
        tatMs,
        values[next + 2] as number,
        values[next + 3] as number,
        cost,
      )
    next += 4
  }
  if (tickets) {
    const atMs = values[next++] as number
    if (atMs >= 0) ticket = lease === '' ? logTicket(atMs, cost) : lease
  }
  const remaining = allowed ? head : -1 - head
  if (out !== undefined)
    out[slot] = storeDecision(allowed, remaining, resetMs, retryAfterMs, ticket, delayMs)
  else if (sink?.decided !== undefined)
    sink.decided(allowed, remaining, resetMs, retryAfterMs, ticket, delayMs)
  else sink?.resolve(storeDecision(allowed, remaining, resetMs, retryAfterMs, ticket, delayMs))
  return next
}

function storeDecision(
  allowed: boolean,
  remaining: number,
  resetMs: number,
  retryAfterMs: number,
  ticket: string | undefined,
  delayMs: number,
): StoreDecision {
  return delayMs === 0
    ? { allowed, remaining, resetMs, retryAfterMs, ticket }
    : { allowed, remaining, resetMs, retryAfterMs, ticket, delayMs }
}

function deliverOne(
  batch: Batch,
  values: readonly number[],
  tickets: boolean,
  limit: number,
): void {
  const { calls, ops, sinks, leases } = batch
  let at = 0
  for (let i = 0; i < calls.length; i++) {
    const sink = sinks[i] as StoreSink
    if (ops[i] !== 'c' && ops[i] !== 'p') sink.resolve(undefined)
    else {
      const cost = (calls[i] as StoreCall).cost
      at = readDecision(values, at, cost, limit, tickets, leases[i] as string, sink, undefined)
    }
  }
}

// A several-policies reply: per consume, one decision per policy; the sink gets the list.
function deliverSet(batch: Batch, values: readonly number[]): void {
  const { calls, ops, sinks, leases } = batch
  let at = 0
  for (let i = 0; i < calls.length; i++) {
    const sink = sinks[i] as StoreSink
    if (ops[i] !== 'c' && ops[i] !== 'p') {
      sink.resolve(undefined)
      continue
    }
    const call = calls[i] as StoreCall
    const { policies } = call.set as PolicySet
    // sized up front: a list grown by push starts with room for 17
    const out = new Array<StoreDecision>(policies.length)
    const given = leases[i] === '' ? undefined : (leases[i] as string).split(',')
    for (let p = 0; p < policies.length; p++) {
      const { algorithm, limit } = policies[p] as Policy
      const lease = algorithm === 'concurrency' ? (given?.[p] ?? '') : ''
      const tickets = algorithm === 'sliding-log' || algorithm === 'concurrency'
      at = readDecision(values, at, call.cost, limit, tickets, lease, undefined, out, p)
    }
    sink.resolve(out)
  }
}
