// What a limiter publishes on `node:diagnostics_channel`: one message per decision, per store
// failure and per circuit that opens or closes. Nothing is built unless someone subscribes.
import { channel } from 'node:diagnostics_channel'
import { nowMs } from '../common/clock.js'
import type { LimiterError } from '../common/errors.js'
import type { Decision, DecisionSource } from '../decision/types.js'
import type { Decide, Limiter } from '../limiter/types.js'
import { type Priority, priorityName } from '../shed/priority.js'
import { MemoryStore } from '../stores/memory-store.js'
import { RedisStore } from '../stores/redis-store.js'
import type { Store } from '../stores/store.js'

/** The channel of {@link DecisionEvent}s: every decision a limiter makes. */
export const DECISION_CHANNEL = 'limiter:decision'
/** The channel of {@link FailureEvent}s: every store failure a limiter sees. */
export const FAILURE_CHANNEL = 'limiter:failure'
/** The channel of {@link CircuitEvent}s: a failure domain's circuit opening or closing. */
export const CIRCUIT_CHANNEL = 'limiter:circuit'
/** The channel of {@link BlockEvent}s: a key blocked (`block`) or penalized (`penalize`). */
export const BLOCK_CHANNEL = 'limiter:block'

/** Which kind of store decided: `'memory'` for in-process stores, `'redis'` for `RedisStore`. */
export type StoreKind = 'memory' | 'redis' | 'custom'

/**
 * Published on `limiter:decision` for every decision (`consume`, `peek`, and the adapters'
 * checks), after it is made.
 */
export interface DecisionEvent {
  readonly limiter: Limiter
  /** The key as the limiter saw it (an adapter's route scope included). */
  readonly key: string
  /** The cost asked for (0 for a peek). */
  readonly cost: number
  readonly decision: Decision
  /** Who decided: the store, the blocked-key cache, or a failure mode (`decision.source`). */
  readonly source: DecisionSource
  /** `'memory'` (an in-process store), `'redis'` (`RedisStore`) or `'custom'` (any other). */
  readonly store: StoreKind
  /**
   * From the ask to the decision, in ms (fractional; the store's round trip for Redis). 0 for a
   * decision a MemoryStore made at once: timing it would cost more than deciding.
   */
  readonly durationMs: number
  /**
   * When the decision was made, in ms since the epoch, by the limiter's clock (for a store that
   * answers later, when its answer came). Always set by a limiter (optional in the type for
   * events built by hand): a subscriber that files decisions by time need not read the clock.
   */
  readonly atMs?: number
  /** The limiter runs in shadow mode: its adapters let a refused request through. */
  readonly shadow: boolean
  /**
   * The request's priority class (`consume`'s `priority`, the adapters' `priority` option):
   * `'normal'` when none was given; a named class by name, another rank as its number. Always
   * set by a limiter (optional in the type for events built by hand).
   */
  readonly priority?: Priority
}

/** Published on `limiter:failure` for every store failure (an open circuit's skips excepted). */
export interface FailureEvent {
  readonly limiter: Limiter
  readonly key: string
  /** The failure, coded `ERR_LIMITER_STORE` or `ERR_LIMITER_TIMEOUT`; `cause` is the original. */
  readonly error: LimiterError
  /** The circuit of the failing domain is open after this failure (calls skip the store). */
  readonly circuitOpen: boolean
}

/** Published on `limiter:circuit` when a failure domain's circuit opens or closes again. */
export interface CircuitEvent {
  readonly limiter: Limiter
  /** The failure domain: `''` for a single Redis, a Cluster master's `host:port`. */
  readonly domain: string
  readonly state: 'open' | 'closed'
}

/**
 * Published on `limiter:block` after `limiter.block(key, duration)` or `limiter.penalize(key,
 * cost)` resolves (not when it fails).
 */
export interface BlockEvent {
  readonly limiter: Limiter
  readonly key: string
  /** `'block'` (`limiter.block`) or `'penalty'` (`limiter.penalize`). */
  readonly kind: 'block' | 'penalty'
  /**
   * A block: the duration asked for, in ms (a longer block already in place is kept). A
   * penalty: the decision's `retryAfterMs` after it (0 if a request would still pass).
   */
  readonly durationMs: number
  /** When that ends, in ms since the epoch, by this process's clock. */
  readonly untilMs: number
  /** A penalty's cost (0 for a block). */
  readonly cost: number
  /** A penalty's decision as it stands afterwards (undefined for a block). */
  readonly decision?: Decision | undefined
}

// One channel object each, made when this module loads (cheap: no subscriber, no work).
export const decisionChannel = channel(DECISION_CHANNEL)
export const failureChannel = channel(FAILURE_CHANNEL)
export const circuitChannel = channel(CIRCUIT_CHANNEL)
export const blockChannel = channel(BLOCK_CHANNEL)

/** The kind of `store`, as decision events name it. */
export function storeKindOf(store: Store): StoreKind {
  if (store instanceof RedisStore) return 'redis'
  return store.local === true ? 'memory' : 'custom'
}

/** The common consume's own path: `decide(key, 1)` at `atMs`, synchronously (a MemoryStore's). */
export type DecideOne = (key: string, atMs: number) => Decision

/**
 * Internal (for `@limiter/inspector`; not part of the public API, may change in any release): told
 * of each decision one limiter makes, peeks (`cost` 0) included, synchronously once it is made,
 * with what a `limiter:decision` event would hold that the limiter does not: no event object is
 * built for it and nothing goes through `node:diagnostics_channel`. It must not throw (an error
 * it throws is rethrown on its own, as a channel subscriber's is, and the decision stands).
 */
export type DecisionObserver = (key: string, cost: number, decision: Decision, atMs: number) => void

/**
 * A limiter's decision observers. `observer` is the one to call (all of them), or undefined while
 * none is registered: the limiter reads it once per decision, and takes its published path only
 * while it is set or the channel has subscribers.
 */
export class DecisionWatch {
  observer: DecisionObserver | undefined
  // one entry per registration: the same function registered twice is two registrations
  #entries: ReadonlyArray<{ readonly observer: DecisionObserver }> = []

  /** Registers `observer`; the function returned unregisters it (once; again does nothing). */
  add(observer: DecisionObserver): () => void {
    const entry = { observer }
    this.#set([...this.#entries, entry])
    return () => this.#set(this.#entries.filter((e) => e !== entry))
  }

  #set(entries: ReadonlyArray<{ readonly observer: DecisionObserver }>): void {
    this.#entries = entries
    const observers = entries.map((e) => e.observer)
    this.observer =
      observers.length > 1
        ? (key, cost, decision, atMs) => {
            for (const o of observers) observed(o, key, cost, decision, atMs)
          }
        : observers[0]
  }
}

/**
 * Where a limiter keeps its {@link DecisionWatch}: a registered symbol with a version, so that a
 * package loading another copy of core (its CommonJS build beside the ESM one) still finds it.
 */
export const WATCH: unique symbol = Symbol.for('@limiter/core.decisionWatch.v1') as never

/**
 * Internal (for `@limiter/inspector`; not part of the public API, may change in any release):
 * calls `observer` with each decision `limiter` makes from now on (see {@link DecisionObserver}),
 * until the function returned is called. Answers undefined for a limiter that cannot be watched
 * this way (not made by `createLimiter`, or by a core without this hook): subscribe to
 * `limiter:decision` for that one instead. Costs nothing once every observer is gone.
 */
export function observeDecisions(
  limiter: Limiter,
  observer: DecisionObserver,
): (() => void) | undefined {
  const watch = (limiter as { [WATCH]?: { add?: unknown } })[WATCH]
  if (watch === undefined || typeof watch.add !== 'function') return undefined
  return (watch as DecisionWatch).add(observer)
}

// An observer's error, rethrown on its own (as diagnostics_channel does a subscriber's): the
// decision it was told of stands.
function observed(
  observer: DecisionObserver,
  key: string,
  cost: number,
  decision: Decision,
  atMs: number,
): void {
  try {
    observer(key, cost, decision, atMs)
  } catch (error) {
    queueMicrotask(() => {
      throw error
    })
  }
}

/**
 * The common consume (`cost` 1, no priority) decided at once and told to `observer` alone: no
 * event to build. The limiter's own path while only observers listen.
 */
export function toldOne(
  one: DecideOne,
  observer: DecisionObserver,
  clock: () => number,
  key: string,
): Decision {
  const atMs = clock()
  const decision = one(key, atMs)
  observed(observer, key, 1, decision, atMs)
  return decision
}

/**
 * `decide`, telling each decision to `watch`'s observers and publishing it on `limiter:decision`.
 * The limiter calls it only while the channel has subscribers, or observers listen to a consume
 * other than the common one (see {@link toldOne}), so a limiter nobody watches pays nothing more.
 * Only what waits is timed, and only for the channel: reading the clock costs more than a
 * MemoryStore decision, so one decided at once in process reports `durationMs: 0`, and its `atMs`
 * is the time the store decided at.
 */
export function publishedDecide(
  limiter: () => Limiter,
  store: Store,
  shadow: boolean,
  decide: Decide,
  one: DecideOne | undefined,
  clock: () => number = nowMs,
  watch: DecisionWatch = new DecisionWatch(),
): Decide {
  const kind = storeKindOf(store)
  // a MemoryStore decides synchronously: nothing to wait for, nothing to time
  const timed = !(store instanceof MemoryStore)
  const publish = (
    key: string,
    cost: number,
    rank: number | undefined,
    decision: Decision,
    atMs: number,
    startMs: number,
  ): Decision => {
    const listening = decisionChannel.hasSubscribers
    // timed before the observers run, from the ask (-1: not timed, see below)
    const durationMs = listening && startMs >= 0 ? performance.now() - startMs : 0
    const { observer } = watch
    if (observer !== undefined) observed(observer, key, cost, decision, atMs)
    if (!listening) return decision
    const event: DecisionEvent = {
      limiter: limiter(),
      key,
      cost,
      decision,
      source: decision.source,
      store: kind,
      durationMs,
      shadow,
      priority: rank === undefined ? 'normal' : priorityName(rank),
      atMs,
    }
    decisionChannel.publish(event)
    return decision
  }
  return (key, cost, rank, waitMs) => {
    if (one !== undefined && cost === 1 && rank === undefined && waitMs === undefined) {
      // (with observers alone, the limiter takes `toldOne` instead of coming here)
      const atMs = clock()
      return publish(key, cost, rank, one(key, atMs), atMs, -1)
    }
    // timed only for the channel's subscribers (an observer is told no duration)
    const startMs = timed && decisionChannel.hasSubscribers ? performance.now() : -1
    const decision = decide(key, cost, rank, waitMs)
    if (!(decision instanceof Promise)) return publish(key, cost, rank, decision, clock(), startMs)
    return decision.then((d) => publish(key, cost, rank, d, clock(), startMs))
  }
}

/** Publishes a store failure on `limiter:failure` (when someone listens). */
export function publishFailure(
  limiter: Limiter,
  key: string,
  error: LimiterError,
  circuitOpen: boolean,
): void {
  if (!failureChannel.hasSubscribers) return
  const event: FailureEvent = { limiter, key, error, circuitOpen }
  failureChannel.publish(event)
}

/** Publishes a circuit opening or closing on `limiter:circuit` (when someone listens). */
export function publishCircuit(limiter: Limiter, domain: string, state: 'open' | 'closed'): void {
  if (!circuitChannel.hasSubscribers) return
  const event: CircuitEvent = { limiter, domain, state }
  circuitChannel.publish(event)
}

/** Publishes a block or a penalty on `limiter:block` (when someone listens). */
export function publishBlock(
  limiter: Limiter,
  key: string,
  durationMs: number,
  cost: number,
  decision: Decision | undefined,
): void {
  if (!blockChannel.hasSubscribers) return
  const kind = decision === undefined ? 'block' : 'penalty'
  const event: BlockEvent = {
    limiter,
    key,
    kind,
    durationMs,
    untilMs: nowMs() + durationMs,
    cost,
    decision,
  }
  blockChannel.publish(event)
}
