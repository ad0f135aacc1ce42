// MemoryStore: the embedded default. Runs each algorithm's TypeScript twin in process.

import type { FixedWindowState } from '../algorithms/fixed-window.js'
import { aheadOf, type GcraState } from '../algorithms/gcra.js'
import { TWINS } from '../algorithms/index.js'
import {
  type AlgorithmTwin,
  ceilDiv,
  floorDiv,
  type Outcome,
  type Writable,
} from '../algorithms/outcome.js'
import { nowMs } from '../common/clock.js'
import { MAX_TIMER_MS } from '../common/duration.js'
import { LimiterRangeError } from '../common/errors.js'
import { knownOptions, type ScopeHints, STORE_HINTS } from '../common/option-names.js'
import type { PolicySet } from '../policies/limits.js'
import type { Policy } from '../policies/policy.js'
import { boundedKey } from './bounded-key.js'
import { blockedDecision, MemoryBlocks } from './memory-blocks.js'
import { evictOldest } from './memory-evict.js'
import { packedNamespace } from './packed-set.js'
import { decideSet, leaseFor } from './set-decision.js'
import { DECIDES_SETS, type Store, type StoreCall, type StoreDecision } from './store.js'

/**
 * Internal: a consume bound to one namespace and policy, for the limiter's synchronous path
 * (no call object, no namespace or algorithm lookup per decision).
 */
export const BIND: unique symbol = Symbol('@limiter/core.bind') as never

/**
 * What {@link BIND} returns: decides `cost` for `key` at `nowMs` (or the store's clock), for a
 * request of priority `rank` (a concurrency policy with a reserve) that waits at most `waitMs`
 * for a reserved slot (see StoreCall.waitMs). The decision object may be reused by the next
 * call: read it at once.
 */
export type BoundConsume = (
  key: string,
  cost: number,
  nowMs: number | undefined,
  rank?: number,
  waitMs?: number,
) => StoreDecision

/**
 * Internal: a one-policy consume of cost 1 that answers the caller's own decision, built from its
 * numbers in the same step (no answer object between): the limiter's common consume.
 */
export const BIND_ONE: unique symbol = Symbol('@limiter/core.bindOne') as never

/** What a {@link BIND_ONE} consume answers with: a cost-1 decision's numbers (no ticket, no wait). */
export type OneAnswer<D> = (
  allowed: boolean,
  remaining: number,
  resetMs: number,
  retryAfterMs: number,
) => D

/** A {@link BIND_ONE} consume: one key at cost 1, at `atMs` (undefined: now). */
export type OneConsume<D> = (key: string, atMs: number | undefined) => D

/** Internal: a limiter's several policies bound to a store (see {@link MemoryStore}'s `BIND_SET`). */
export const BIND_SET: unique symbol = Symbol('@limiter/core.bindSet') as never

/** What {@link BIND_SET} returns: all-or-nothing decisions and refunds for one policy set. */
export interface BoundSet {
  /** One decision per policy: admitted by all and counted by all, or counted by none. */
  consume(
    key: string,
    cost: number,
    nowMs: number | undefined,
    rank?: number,
    waitMs?: number,
  ): StoreDecision[]
  refund(
    key: string,
    cost: number,
    tickets: readonly (string | undefined)[],
    nowMs: number | undefined,
  ): void
  reset(key: string): void
  /** Counts `cost` past the limit in every policy but concurrency, then peeks (see `penalize`). */
  penalize(key: string, cost: number, nowMs: number | undefined): StoreDecision[]
  /** Gives back the leases `tickets` name (concurrency policies; the others are untouched). */
  release(key: string, tickets: readonly (string | undefined)[], nowMs: number | undefined): void
}

// Namespaces held before the empty ones are let go.
const MAX_SPACES = 10_000

const MEMORY_STORE_OPTIONS: ReadonlySet<string> = new Set(['maxKeys', 'sweepIntervalMs'])
// lru-cache's `max` and node-cache's `checkperiod` (in seconds), as they are called here.
const MEMORY_STORE_HINTS: ScopeHints = new Map([
  ...STORE_HINTS,
  ['max', 'maxKeys'],
  ['checkperiod', "node-cache's `checkperiod` is in seconds: use `sweepIntervalMs` (ms)"],
])

/** Options for {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * The most keys held at once, counters and blocks (default 100,000). When full, expired state
   * is swept first, then the oldest keys are dropped, which forgets their counts (or lifts their
   * blocks): size it above your active key count. A key holding a live concurrency lease is never
   * dropped (its calls are in flight); such keys are as many as those calls at most, and when
   * they fill the store it holds them and at most 1% of `maxKeys` more.
   */
  readonly maxKeys?: number
  /** How often expired state is swept, in ms (default 30,000). */
  readonly sweepIntervalMs?: number
}

interface Entry {
  state: unknown
  expiresAtMs: number
}

/**
 * An in-process store: no server, exact, and bounded. State for each key expires when it is
 * back to "empty"; a timer (unref'd, so it never holds the process open) sweeps what expired.
 * A key longer than 200 UTF-8 bytes is held as its SHA-256 digest, so `maxKeys` bounds bytes too.
 *
 * @example
 * const store = new MemoryStore({ maxKeys: 50_000 })
 * const limiter = createLimiter({ limit: 10, window: '1s', store })
 */
export class MemoryStore implements Store {
  readonly local = true
  readonly [DECIDES_SETS] = true
  // One map per namespace: looking up the user's key as given is several times faster than
  // hashing a freshly concatenated `namespace + key` string on every decision.
  readonly #spaces = new Map<string, Map<string, Entry>>()
  // The name of each namespace map, and the empty ones held weakly (see #space).
  readonly #names = new WeakMap<Map<string, Entry>, string>()
  readonly #weak = new Map<string, WeakRef<Map<string, Entry>>>()
  #spaceLimit = MAX_SPACES
  // A map no limiter holds any more leaves #weak when the GC reports it gone, and at the latest
  // when #weak reaches #weakLimit (amortized: the next scan waits until as many again are held).
  readonly #gone = new FinalizationRegistry<string>((namespace) => {
    if (this.#weak.get(namespace)?.deref() === undefined) this.#weak.delete(namespace)
  })
  #weakLimit = MAX_SPACES
  #size = 0
  readonly #maxKeys: number
  // The size at which a new key makes room: maxKeys, or past it when live leases (never dropped)
  // held too many keys for #makeRoom to free a batch (see there).
  #roomAt: number
  #timer: ReturnType<typeof setInterval> | undefined
  // The latest time any call used: sweeping follows the callers' clock, even an injected one.
  #latestMs = 0
  // Blocked keys (a limiter's `block`), by namespace: a limiter with several policies blocks
  // under its first policy's namespace.
  readonly #blocks = new MemoryBlocks()

  constructor(options: MemoryStoreOptions = {}) {
    const { maxKeys = 100_000, sweepIntervalMs = 30_000 } = knownOptions(
      options,
      MEMORY_STORE_OPTIONS,
      '',
      MEMORY_STORE_HINTS,
    )
    if (!Number.isInteger(maxKeys) || maxKeys < 1) {
      throw new LimiterRangeError('maxKeys', maxKeys, 'must be a positive integer')
    }
    if (
      !Number.isInteger(sweepIntervalMs) ||
      sweepIntervalMs < 1 ||
      sweepIntervalMs > MAX_TIMER_MS
    ) {
      throw new LimiterRangeError(
        'sweepIntervalMs',
        sweepIntervalMs,
        `must be a whole number of ms from 1 to ${MAX_TIMER_MS} (2^31 - 1, the longest timer Node keeps)`,
      )
    }
    this.#maxKeys = maxKeys
    this.#roomAt = maxKeys
    this.#timer = setInterval(() => this.sweep(), sweepIntervalMs)
    this.#timer.unref?.()
  }

  /**
   * How many keys are held: counters and blocks (including expired ones not yet swept), what
   * `maxKeys` bounds.
   */
  get size(): number {
    return this.#size + this.#blocks.size
  }

  consume(call: StoreCall): Promise<StoreDecision> {
    return Promise.resolve(this.consumeSync(call))
  }

  /** The synchronous core of {@link MemoryStore.consume}. */
  consumeSync(call: StoreCall): StoreDecision {
    const twin = TWINS[call.policy.algorithm]
    const space = this.#space(call.namespace)
    const { policy, cost } = call
    const key = boundedKey(call.key)
    const blocks = call.namespace
    return this.#check(
      space,
      twin,
      policy,
      key,
      cost,
      this.#now(call),
      leaseFor(policy, cost, call.rank, call.waitMs),
      blocks,
    )
  }

  /** Internal: {@link BIND}. */
  [BIND](namespace: string, policy: Policy): BoundConsume {
    const general = this.#general(namespace, policy)
    // the answer, reused from call to call: BoundConsume's callers read it at once
    const out = { allowed: true, remaining: 0, resetMs: 0, retryAfterMs: 0, ticket: undefined }
    const answer: OneAnswer<StoreDecision> = (allowed, remaining, resetMs, retryAfterMs) => {
      out.allowed = allowed
      out.remaining = remaining
      out.resetMs = resetMs
      out.retryAfterMs = retryAfterMs
      return out
    }
    const one = this.#oneOf(namespace, policy, answer, (key, at) => general(key, 1, at))
    if (one === undefined) return general
    return (key, cost, at, rank, waitMs) =>
      cost === 1 ? one(key, at) : general(key, cost, at, rank, waitMs)
  }

  /**
   * Internal: {@link BIND_ONE}. `answer` builds the caller's decision from a cost-1 consume's
   * numbers; `other` from a store decision, for a consume the common path does not take (a key
   * blocked anywhere in the store). `undefined`: the policy has no such path (see BIND).
   */
  [BIND_ONE]<D>(
    namespace: string,
    policy: Policy,
    answer: OneAnswer<D>,
    other: (d: StoreDecision) => D,
  ): OneConsume<D> | undefined {
    const general = this.#general(namespace, policy)
    return this.#oneOf(namespace, policy, answer, (key, at) => other(general(key, 1, at)))
  }

  // Any consume of one policy: the key's state through its twin (see #check).
  #general(namespace: string, policy: Policy): BoundConsume {
    const twin = TWINS[policy.algorithm]
    const space = this.#space(namespace)
    // a consume's ticket: a concurrency lease, or a waiting policy's own wait cap
    const tickets = policy.algorithm === 'concurrency' || policy.waitUnits !== undefined
    const blocks = namespace
    const clock = this.#clock
    return (key, cost, at, rank, waitMs) => {
      const now = clock(at)
      const lease = tickets ? leaseFor(policy, cost, rank, waitMs) : undefined
      return this.#check(space, twin, policy, boundedKey(key), cost, now, lease, blocks)
    }
  }

  // The common consume's own path for `policy` (cost 1, while no key is blocked; `otherwise`
  // takes the rest), where its algorithm has one and it does not wait.
  #oneOf<D>(
    namespace: string,
    policy: Policy,
    answer: OneAnswer<D>,
    otherwise: OneConsume<D>,
  ): OneConsume<D> | undefined {
    if (policy.waitUnits !== undefined) return undefined
    const twin = TWINS[policy.algorithm]
    const space = this.#space(namespace)
    if (twin === TWINS.gcra) return this.#gcraOne(space, policy, answer, otherwise)
    if (twin === TWINS['fixed-window']) return this.#fixedOne(space, policy, answer, otherwise)
    return undefined
  }

  // The common consume, a GCRA policy (or bucket) that does not wait, at cost 1, while no key
  // is blocked: exactly the general path's decision (gcra.check with cost 1; a property test
  // compares them), without its branches or the outcome object, answered by `answer`.
  // Its rare steps are calls (an injected clock's record, a refusal, a new key's write): that
  // keeps the closure's bytecode under the 460 bytes V8's optimizing compiler inlines.
  #gcraOne<D>(
    space: Map<string, Entry>,
    policy: Policy,
    answer: OneAnswer<D>,
    otherwise: OneConsume<D>,
  ): OneConsume<D> {
    const { limit, windowMs: w, burst } = policy
    const tolerance = burst * w
    const blocks = this.#blocks
    const clock = this.#clock
    return (key, at) => {
      if (blocks.size !== 0) return otherwise(key, at)
      const now = at === undefined ? nowMs() : clock(at)
      const held = boundedKey(key)
      const entry = space.get(held)
      const before =
        entry !== undefined && entry.expiresAtMs > now
          ? aheadOf(entry.state as GcraState, now, limit)
          : 0
      const ahead = before + w
      if (ahead > tolerance) return gcraRefusal(answer, before, ahead, tolerance, w, limit)
      // stateAt(now, ahead, limit, reuse) and ceilDiv(ahead, limit) from one quotient: the TAT's
      // whole ms and the fraction left (exact wherever floorDiv is)
      const whole = floorDiv(ahead, limit)
      const frac = ahead - whole * limit
      const ttlMs = frac > 0 ? whole + 1 : whole
      // the key's state object is written in place (stateAt's reuse), a new one only for a new key
      const s = entry?.state as Writable<GcraState> | undefined
      if (s !== undefined) {
        s.ms = now + whole
        s.frac = frac
        s.den = limit
        ;(entry as Entry).expiresAtMs = now + ttlMs
      } else this.#write(space, held, entry, { ms: now + whole, frac, den: limit }, now + ttlMs)
      return answer(true, Math.max(0, floorDiv(tolerance - ahead, w)), ttlMs, 0)
    }
  }

  // The same for a fixed-window policy that does not wait: exactly fixedWindow.check's decision
  // at cost 1 (the property test covers it too), the window's end and count read and written in
  // place. A window a policy change shortened still ends where its first request saw it end.
  #fixedOne<D>(
    space: Map<string, Entry>,
    policy: Policy,
    answer: OneAnswer<D>,
    otherwise: OneConsume<D>,
  ): OneConsume<D> {
    const { limit, windowMs: w } = policy
    const blocks = this.#blocks
    const clock = this.#clock
    return (key, at) => {
      if (blocks.size !== 0) return otherwise(key, at)
      const now = at === undefined ? nowMs() : clock(at)
      const held = boundedKey(key)
      const entry = space.get(held)
      const state =
        entry !== undefined && entry.expiresAtMs > now
          ? (entry.state as Writable<FixedWindowState>)
          : undefined
      const openMs = state === undefined ? now : Math.min(state.endMs, now + w)
      const open = openMs > now
      const endMs = open ? openMs : now + w
      const count = open ? (state as FixedWindowState).count : 0
      const leftMs = endMs - now
      // resetMs is never 0 here: at least 1 is counted (or `limit` of them, refused)
      if (count >= limit) {
        // refused: a window a policy change shortened keeps the end this request saw
        if (open && endMs < (state as FixedWindowState).endMs) {
          ;(state as Writable<FixedWindowState>).endMs = endMs
          ;(entry as Entry).expiresAtMs = endMs
        }
        return answer(false, Math.max(0, limit - count), leftMs, leftMs)
      }
      const counted = count + 1
      if (entry === undefined) this.#write(space, held, undefined, { endMs, count: counted }, endMs)
      else {
        const s = entry.state as Writable<FixedWindowState> | undefined
        if (s === undefined) entry.state = { endMs, count: counted }
        else {
          s.endMs = endMs
          s.count = counted
        }
        entry.expiresAtMs = endMs
      }
      return answer(true, Math.max(0, limit - counted), leftMs, 0)
    }
  }

  /** Internal: {@link BIND_SET}. */
  [BIND_SET](set: PolicySet): BoundSet {
    const spaces = set.namespaces.map((namespace) => this.#space(namespace))
    const { policies } = set
    // a limiter's block is held under its first policy's namespace
    const blocks = set.namespaces[0] as string
    const now = this.#clock
    const packed = packedNamespace(set)
    if (packed !== undefined) return this.#bindPacked(set, this.#space(packed), spaces, now)
    return {
      consume: (key, cost, at, rank, waitMs) =>
        this.#checkAll(spaces, policies, boundedKey(key), cost, now(at), blocks, rank, waitMs),
      penalize: (key, cost, at) => {
        const t = now(at)
        const held = boundedKey(key)
        policies.forEach((policy, i) => {
          this.#penalize(spaces[i] as Map<string, Entry>, policy, held, cost, t)
        })
        return this.#checkAll(spaces, policies, held, 0, t, blocks)
      },
      refund: (key, cost, tickets, at) => {
        const t = now(at)
        const held = boundedKey(key)
        policies.forEach((policy, i) => {
          this.#refund(spaces[i] as Map<string, Entry>, policy, held, cost, tickets[i], t)
        })
      },
      release: (key, tickets, at) => {
        const t = now(at)
        const held = boundedKey(key)
        policies.forEach((policy, i) => {
          const ticket = tickets[i]
          if (policy.algorithm === 'concurrency' && ticket !== undefined)
            this.#refund(spaces[i] as Map<string, Entry>, policy, held, 0, ticket, t)
        })
      },
      reset: (key) => {
        const held = boundedKey(key)
        for (const space of spaces) this.#delete(space, held)
        this.#blocks.delete(blocks, held)
      },
    }
  }

  // The time of a call: `at` (an injected clock's), or now. Sweeping follows the latest of
  // them and the real clock (sweep reads that itself, so a real-clock call records nothing).
  readonly #clock = (at: number | undefined): number => {
    if (at === undefined) return nowMs()
    if (at > this.#latestMs) this.#latestMs = at
    return at
  }

  // BIND_SET for a set whose states share one key (see packedNamespace): the twin of
  // lua/lib/packed-limits.lua. Its policies hold no leases: a release does nothing.
  #bindPacked(
    set: PolicySet,
    space: Map<string, Entry>,
    spaces: readonly Map<string, Entry>[],
    now: (at: number | undefined) => number,
  ): BoundSet {
    const { policies } = set
    // its block is held beside its one key, under the same namespace
    const blocks = packedNamespace(set) as string
    const adjust = (key: string, cost: number, t: number, penalty: boolean): void => {
      const entry = space.get(key)
      if (entry === undefined && !penalty) return
      const held = packedOf(entry, policies.length)
      const states = liveStates(held, t)
      policies.forEach((policy, i) => {
        const twin = TWINS[policy.algorithm]
        const o = penalty
          ? (twin.penalize?.(states[i], t, policy, cost) ?? { state: null, ttlMs: 0 })
          : twin.refund(states[i], t, policy, cost)
        held.states[i] = o.state ?? undefined
        held.endsMs[i] = o.state === null ? 0 : t + o.ttlMs
      })
      this.#writePacked(space, key, entry, held, t)
    }
    return {
      consume: (key, cost, at) =>
        this.#checkPacked(space, policies, boundedKey(key), cost, now(at), blocks),
      penalize: (key, cost, at) => {
        const t = now(at)
        const held = boundedKey(key)
        adjust(held, cost, t, true)
        return this.#checkPacked(space, policies, held, 0, t, blocks)
      },
      refund: (key, cost, _tickets, at) => adjust(boundedKey(key), cost, now(at), false),
      release: () => undefined,
      reset: (key) => {
        const held = boundedKey(key)
        this.#delete(space, held)
        for (const s of spaces) this.#delete(s, held)
        this.#blocks.delete(blocks, held)
        this.#blocks.delete(set.namespaces[0] as string, held)
      },
    }
  }

  // Several policies, all or nothing (the twin of lua/lib/limits.lua), each in its own space.
  #checkAll(
    spaces: readonly Map<string, Entry>[],
    policies: PolicySet['policies'],
    key: string,
    given: number,
    now: number,
    blocks: string,
    rank?: number,
    waitMs?: number,
  ): StoreDecision[] {
    const n = policies.length
    const entries: Array<Entry | undefined> = new Array(n)
    const states: unknown[] = new Array(n)
    for (let i = 0; i < n; i++) {
      const entry = (spaces[i] as Map<string, Entry>).get(key)
      entries[i] = entry
      states[i] = entry !== undefined && entry.expiresAtMs > now ? entry.state : undefined
    }
    const leftMs = this.#blocks.left(blocks, key, now)
    const { decisions, outcomes } = decideSet(policies, states, given, now, leftMs, rank, waitMs)
    for (let i = 0; i < n; i++) {
      const o = outcomes[i] as Outcome<unknown>
      if (o.state !== undefined)
        this.#write(spaces[i] as Map<string, Entry>, key, entries[i], o.state, now + o.ttlMs)
    }
    return decisions
  }

  // The same, for a set whose states share one key (the twin of lua/lib/packed-limits.lua).
  #checkPacked(
    space: Map<string, Entry>,
    policies: PolicySet['policies'],
    key: string,
    given: number,
    now: number,
    blocks: string,
  ): StoreDecision[] {
    const entry = space.get(key)
    const held = packedOf(entry, policies.length)
    const leftMs = this.#blocks.left(blocks, key, now)
    const { decisions, outcomes } = decideSet(
      policies,
      liveStates(held, now),
      given,
      now,
      leftMs,
      undefined,
      undefined,
    )
    let changed = false
    outcomes.forEach((o, i) => {
      if (o.state === undefined) return
      held.states[i] = o.state
      held.endsMs[i] = now + o.ttlMs
      changed = true
    })
    if (changed) this.#writePacked(space, key, entry, held, now)
    return decisions
  }

  // Writes a packed set's states: the key lives until its last policy is empty again.
  #writePacked(
    space: Map<string, Entry>,
    key: string,
    entry: Entry | undefined,
    held: PackedState,
    now: number,
  ): void {
    const endsMs = Math.max(...held.endsMs)
    if (endsMs > now) this.#write(space, key, entry, held, endsMs)
    else this.#delete(space, key)
  }

  // One consume: the key's live state through its twin, and the new state written back.
  #check(
    space: Map<string, Entry>,
    twin: AlgorithmTwin<unknown>,
    policy: Policy,
    key: string,
    cost: number,
    now: number,
    lease: string | undefined,
    blocks: string,
  ): StoreDecision {
    const entry = space.get(key)
    const state = entry !== undefined && entry.expiresAtMs > now ? entry.state : undefined
    // a blocked key counts nothing: its policy peeks, and refuses until the block ends
    const leftMs = this.#blocks.left(blocks, key, now)
    // The stored state object is handed back for reuse: a busy key keeps one object for life.
    const outcome =
      leftMs > 0
        ? twin.check(state, now, policy, 0)
        : twin.check(state, now, policy, cost, entry?.state, lease)
    if (outcome.state !== undefined)
      this.#write(space, key, entry, outcome.state, now + outcome.ttlMs)
    return leftMs > 0 ? blockedDecision(outcome, leftMs) : outcome
  }

  /**
   * Counts `call.cost` against `call.key` past the limit, in every policy but concurrency (a
   * penalty), then answers as a peek would: one decision, or one per policy with `set`.
   */
  penalize(call: StoreCall): Promise<StoreDecision | StoreDecision[]> {
    return Promise.resolve(this.penalizeSync(call))
  }

  /** The synchronous core of {@link MemoryStore.penalize}. */
  penalizeSync(call: StoreCall): StoreDecision | StoreDecision[] {
    if (call.set !== undefined)
      return this[BIND_SET](call.set).penalize(call.key, call.cost, call.nowMs)
    const { policy, cost } = call
    const space = this.#space(call.namespace)
    const key = boundedKey(call.key)
    const now = this.#now(call)
    this.#penalize(space, policy, key, cost, now)
    return this.#check(
      space,
      TWINS[policy.algorithm],
      policy,
      key,
      0,
      now,
      undefined,
      call.namespace,
    )
  }

  // One policy's penalty (none for concurrency: a penalty is not a lease).
  #penalize(space: Map<string, Entry>, policy: Policy, key: string, cost: number, now: number) {
    const penalize = TWINS[policy.algorithm].penalize
    if (penalize === undefined) return
    const entry = space.get(key)
    const state = entry !== undefined && entry.expiresAtMs > now ? entry.state : undefined
    const outcome = penalize(state, now, policy, cost)
    if (outcome.state === null) this.#delete(space, key)
    else this.#write(space, key, entry, outcome.state, now + outcome.ttlMs)
  }

  /**
   * Blocks `call.key` for `durationMs` from now (a block that ends later is kept): every consume
   * or peek is refused until then, counting nothing. Resolves with the ms the block has left.
   */
  block(call: Omit<StoreCall, 'cost'>, durationMs: number): Promise<number> {
    const now = this.#now(call as StoreCall)
    const key = boundedKey(call.key)
    // a set whose states share one key holds its block beside it
    const namespace = (call.set && packedNamespace(call.set)) ?? call.namespace
    // a block is a key a client may choose (`login:${email}`): it counts towards maxKeys
    if (!this.#blocks.has(namespace, key) && this.size >= this.#roomAt) this.#makeRoom()
    const endMs = this.#blocks.add(namespace, key, now + durationMs)
    return Promise.resolve(endMs - now)
  }

  refund(call: StoreCall): Promise<void> {
    const now = this.#now(call)
    const space = this.#space(call.namespace)
    this.#refund(space, call.policy, boundedKey(call.key), call.cost, call.ticket, now)
    return Promise.resolve()
  }

  // One policy's refund (a concurrency policy's: the release of the lease `ticket` names).
  #refund(
    space: Map<string, Entry>,
    policy: Policy,
    key: string,
    cost: number,
    ticket: string | undefined,
    now: number,
  ): void {
    const entry = space.get(key)
    const state = entry !== undefined && entry.expiresAtMs > now ? entry.state : undefined
    if (state === undefined && entry === undefined) return
    const outcome = TWINS[policy.algorithm].refund(state, now, policy, cost, ticket)
    if (outcome.state === null) this.#delete(space, key)
    else this.#write(space, key, entry, outcome.state, now + outcome.ttlMs)
  }

  release(call: StoreCall): Promise<void> {
    const { set } = call
    if (set === undefined) {
      if (call.policy.algorithm === 'concurrency' && call.ticket !== undefined)
        this.#refund(
          this.#space(call.namespace),
          call.policy,
          boundedKey(call.key),
          0,
          call.ticket,
          this.#now(call),
        )
    } else this[BIND_SET](set).release(call.key, call.tickets ?? [], call.nowMs)
    return Promise.resolve()
  }

  reset(call: Omit<StoreCall, 'cost'>): Promise<void> {
    if (call.set !== undefined && call.set.policies.length > 1) {
      this[BIND_SET](call.set).reset(call.key)
      return Promise.resolve()
    }
    const space = this.#spaces.get(call.namespace)
    const key = boundedKey(call.key)
    if (space !== undefined) this.#delete(space, key)
    this.#blocks.delete(call.namespace, key)
    return Promise.resolve()
  }

  /** Drops every expired key now. Runs on a timer; call it yourself to reclaim memory sooner. */
  sweep(): number {
    const now = Math.max(this.#latestMs, nowMs())
    let dropped = 0
    for (const space of this.#spaces.values()) {
      for (const [key, entry] of space) {
        if (entry.expiresAtMs <= now) {
          space.delete(key)
          dropped++
        }
      }
    }
    this.#size -= dropped
    const swept = dropped + this.#blocks.sweep(now)
    if (this.size < this.#maxKeys) this.#roomAt = this.#maxKeys
    return swept
  }

  /** Stops the sweep timer and forgets every key. */
  close(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
    // The namespace maps stay (empty): limiters bound to them keep working.
    for (const space of this.#spaces.values()) space.clear()
    this.#blocks.clear()
    this.#size = 0
    this.#roomAt = this.#maxKeys
    return Promise.resolve()
  }

  #now(call: StoreCall): number {
    return this.#clock(call.nowMs)
  }

  #space(namespace: string): Map<string, Entry> {
    let space = this.#spaces.get(namespace)
    if (space !== undefined) return space
    // Namespaces come from limiters, and limiters chosen per request (`limits` by plan) can be
    // many: past MAX_SPACES the empty ones are held weakly, so a namespace no limiter holds any
    // more is freed, while one a live limiter holds is still the one its name finds.
    space = this.#weak.get(namespace)?.deref()
    if (space !== undefined) {
      this.#attach(namespace, space)
      return space
    }
    if (this.#spaces.size >= this.#spaceLimit) {
      this.#detachEmpty()
      // the next scan waits until as many namespaces again are held: O(1) per namespace
      this.#spaceLimit = Math.max(MAX_SPACES, 2 * this.#spaces.size)
    }
    space = new Map()
    this.#spaces.set(namespace, space)
    this.#names.set(space, namespace)
    return space
  }

  #detachEmpty(): void {
    for (const [namespace, space] of this.#spaces) {
      if (space.size !== 0) continue
      this.#spaces.delete(namespace)
      this.#weak.set(namespace, new WeakRef(space))
      this.#gone.register(space, namespace)
    }
    if (this.#weak.size < this.#weakLimit) return
    for (const [namespace, ref] of this.#weak)
      if (ref.deref() === undefined) this.#weak.delete(namespace)
    this.#weakLimit = Math.max(MAX_SPACES, 2 * this.#weak.size)
  }

  #attach(namespace: string, space: Map<string, Entry>): void {
    this.#weak.delete(namespace)
    this.#spaces.set(namespace, space)
  }

  #delete(space: Map<string, Entry>, key: string): void {
    if (space.delete(key)) this.#size--
  }

  #write(
    space: Map<string, Entry>,
    key: string,
    entry: Entry | undefined,
    state: unknown,
    expiresAtMs: number,
  ): void {
    if (entry !== undefined) {
      entry.state = state
      entry.expiresAtMs = expiresAtMs
      return
    }
    if (this.size >= this.#roomAt) this.#makeRoom()
    // a namespace held weakly gets a key: held (and swept) again
    if (space.size === 0) {
      const namespace = this.#names.get(space) as string
      if (this.#spaces.get(namespace) !== space) this.#attach(namespace, space)
    }
    space.set(key, { state, expiresAtMs })
    this.#size++
  }

  #makeRoom(): void {
    // Sweeping is O(n), so do it only when full, then drop the oldest keys in a batch (1% of
    // maxKeys) so the next inserts do not scan again: counters and blocks alike, each in
    // proportion to what it holds. A key holding a live lease is never dropped (that would admit
    // more calls than `limit`): when such keys leave less than a batch to drop, the store holds
    // them and the next scan waits for a batch of new keys all the same.
    this.sweep()
    const held = this.size
    if (held < this.#maxKeys) return
    const batch = Math.max(1, Math.ceil(this.#maxKeys / 100))
    const excess = held - this.#maxKeys + batch
    let counters = excess - this.#blocks.dropOldest(Math.round((excess * this.#blocks.size) / held))
    const dropped = evictOldest(this.#spaces.values(), counters, Math.max(this.#latestMs, nowMs()))
    this.#size -= dropped
    counters -= dropped
    // fewer counters than their share: the rest from the blocks
    if (counters > 0) this.#blocks.dropOldest(counters)
    this.#roomAt = Math.max(this.#maxKeys, this.size + batch)
  }
}

// A packed set's state (see packedNamespace): each policy's state and when it is empty again.
interface PackedState {
  readonly states: unknown[]
  readonly endsMs: number[]
}

// The packed state an entry holds (a fresh one when it holds none, or something else).
function packedOf(entry: Entry | undefined, n: number): PackedState {
  const held = entry?.state as PackedState | undefined
  if (held !== undefined && held.endsMs?.length === n) return held
  return { states: new Array(n).fill(undefined), endsMs: new Array(n).fill(0) }
}

// Each policy's state while it is live at `now`, else undefined.
function liveStates(held: PackedState, now: number): unknown[] {
  return held.states.map((state, i) => ((held.endsMs[i] as number) > now ? state : undefined))
}

// A GCRA common consume's refusal (MemoryStore's #gcraOne): the TAT `before` units of 1/limit
// ms from now, `ahead` with this request, past the `tolerance`; `w` units a request.
function gcraRefusal<D>(
  answer: OneAnswer<D>,
  before: number,
  ahead: number,
  tolerance: number,
  w: number,
  limit: number,
): D {
  return answer(
    false,
    Math.max(0, floorDiv(tolerance - before, w)),
    ceilDiv(before, limit),
    ceilDiv(ahead - tolerance, limit),
  )
}
