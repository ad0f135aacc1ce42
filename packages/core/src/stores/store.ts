// The Store interface: where limiter state lives.
import type { PolicySet } from '../policies/limits.js'
import type { Policy } from '../policies/policy.js'

/** One request to a store: evaluate `policy` for `key` under `namespace`. */
export interface StoreCall {
  readonly policy: Policy
  /** `prefix + name`: contains no braces. */
  readonly namespace: string
  /** The user's key: any non-empty string. */
  readonly key: string
  /** Integer cost; 0 peeks. For refunds, the cost to give back. */
  readonly cost: number
  /**
   * What a consume returned to identify its admission (sliding-log's record, concurrency's
   * lease), for an exact refund or release.
   */
  readonly ticket?: string | undefined
  /**
   * The request's priority rank (0 critical, 1 high, 2 normal, 3 low, more is lower): a
   * concurrency policy with a `reserve` admits it only below its class's ceiling (see
   * `ceilingOf`). Absent: normal.
   */
  readonly rank?: number | undefined
  /**
   * A consume's own wait cap: the most whole ms it may wait for a reserved slot (a gcra, token-
   * or leaky-bucket policy with `maxDelay` or `delayAfter`). A request that would have to wait
   * longer is refused, reserving nothing, as one past the policy's allowance is; the policy's
   * allowance still bounds it. Absent: the policy's allowance alone. A store without reserving
   * policies ignores it.
   */
  readonly waitMs?: number | undefined
  /** Test clock only (see `@limiter/core/testing`); stores read their own clock otherwise. */
  readonly nowMs?: number | undefined
  /**
   * Internal: a limiter with several policies decides them all together (stores marked
   * {@link DECIDES_SETS}); `policy` and `namespace` are then its first policy's.
   */
  readonly set?: PolicySet | undefined
  /** A refund or release of a limiter with several policies: each policy's ticket. */
  readonly tickets?: readonly (string | undefined)[] | undefined
}

/** A store's answer to a consume. */
export interface StoreDecision {
  readonly allowed: boolean
  readonly remaining: number
  readonly resetMs: number
  readonly retryAfterMs: number
  readonly ticket?: string | undefined
  /** An admission that reserved a later slot: ms to wait before going ahead (absent: 0). */
  readonly delayMs?: number | undefined
}

/**
 * Where limiter state lives. `MemoryStore` and `RedisStore` implement it; each call is atomic
 * for its key.
 */
export interface Store {
  consume(call: StoreCall): Promise<StoreDecision>
  refund(call: StoreCall): Promise<void>
  reset(call: Omit<StoreCall, 'cost'>): Promise<void>
  /**
   * Gives back the leases of a concurrency admission (`ticket`, or `tickets` with several
   * policies); the other policies are untouched. Needed only for `concurrency` policies.
   */
  release?(call: StoreCall): Promise<void>
  /**
   * Blocks `call.key` (every policy of the limiter: with `set`, kept beside its first policy's
   * state) for `durationMs` from now, by the store's clock; a block that ends later already is
   * kept. Until it ends, every consume and peek of the key is refused (nothing remaining, a
   * Retry-After no earlier than the block's end) and counts nothing; `reset` lifts it.
   * Resolves with the ms the block has left. Needed only for `limiter.block`.
   */
  block?(call: Omit<StoreCall, 'cost'>, durationMs: number): Promise<number | undefined>
  /**
   * A penalty: counts `call.cost` against `call.key` in every policy but concurrency even past
   * the limit, then answers as a peek (cost 0) would (one decision per policy with `set`).
   * Needed only for `limiter.penalize`.
   */
  penalize?(call: StoreCall): Promise<StoreDecision | StoreDecision[]>
  /** True for an in-process store: the limiter skips its deadline and failure policy. */
  readonly local?: boolean
  /**
   * The part of the store that fails together for this call (a Cluster node, say). The limiter
   * keeps one circuit breaker per domain, so a dead node only trips its own keys' circuit.
   * Called before each call; must be cheap and must not throw. Without it: one circuit.
   */
  failureDomain?(call: Omit<StoreCall, 'cost'>): string
}

/** Where a store delivers one call's outcome (the limiter's guard entry for that call). */
export interface StoreSink {
  resolve(value: unknown): void
  reject(error: unknown): void
  /** A consume's decision as plain values (spares the store building a StoreDecision). */
  decided?(
    allowed: boolean,
    remaining: number,
    resetMs: number,
    retryAfterMs: number,
    ticket: string | undefined,
    delayMs: number,
  ): void
}

/**
 * What a store call does: consume, refund, release (a concurrency admission's leases), or
 * penalize (count past the limit, then peek).
 */
export type StoreOp = 'c' | 'r' | 'l' | 'p'

/**
 * Internal: a store that can settle a sink directly (RedisStore) takes calls here, sparing the
 * promise its public methods would make per call.
 */
export const SUBMIT: unique symbol = Symbol('@limiter/core.submit') as never

/** A store with the internal {@link SUBMIT} entry point. */
export interface SubmittingStore extends Store {
  [SUBMIT](call: StoreCall, op: StoreOp, sink: StoreSink): void
}

/**
 * Internal: marks a store that decides a {@link StoreCall} with a `set` (several policies) all
 * or nothing, answering a consume with one `StoreDecision` per policy.
 */
export const DECIDES_SETS: unique symbol = Symbol('@limiter/core.decidesSets') as never

/** Whether `value` looks like a {@link Store} (duck-typed). */
export function isStore(value: unknown): value is Store {
  if (value === null || typeof value !== 'object') return false
  const s = value as Record<string, unknown>
  return (
    typeof s.consume === 'function' &&
    typeof s.refund === 'function' &&
    typeof s.reset === 'function' &&
    (s.failureDomain === undefined || typeof s.failureDomain === 'function') &&
    (s.release === undefined || typeof s.release === 'function') &&
    (s.block === undefined || typeof s.block === 'function') &&
    (s.penalize === undefined || typeof s.penalize === 'function')
  )
}
