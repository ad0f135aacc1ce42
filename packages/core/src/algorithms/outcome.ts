// The shape every algorithm twin shares: pure functions of (state, nowMs, policy, cost).
import type { Policy } from '../policies/policy.js'

/**
 * What an algorithm's check step decided, and the state its commit step writes.
 * `state` is `undefined` when nothing is written (a rejection or a peek).
 */
export interface Outcome<S> {
  readonly allowed: boolean
  readonly remaining: number
  readonly resetMs: number
  readonly retryAfterMs: number
  readonly state: S | undefined
  /** How long the written state matters: ms until it is back to "empty". */
  readonly ttlMs: number
  /**
   * Identifies what this request added (sliding-log's record, concurrency's lease), so a refund
   * or release can remove exactly it.
   */
  readonly ticket?: string | undefined
  /** An admission that reserved a later slot: ms to wait before going ahead (absent: 0). */
  readonly delayMs?: number | undefined
}

/** `T` with its fields writable: how a twin fills a `reuse` state object. */
export type Writable<T> = { -readonly [K in keyof T]: T[K] }

/** A refund's result: the state to write (`null` deletes it) and its time to live. */
export interface RefundOutcome<S> {
  readonly state: S | null
  readonly ttlMs: number
}

/**
 * The TypeScript twin of one Lua script. `cost` 0 peeks: the decision for a cost-1 request,
 * with nothing written.
 *
 * `reuse` is a state object the caller gives up (MemoryStore passes the key's stored state, even
 * an expired one): an admission may write the new state into it, after reading `state`, instead
 * of allocating one. The decision is the same either way. A busy key's state then lives as long
 * as the key, where a fresh object per decision would outlive the young generation and cost a
 * full GC to reclaim.
 */
export interface AlgorithmTwin<S> {
  /**
   * `lease`: a consume's ticket: a concurrency admission's lease, `<cost>:<id>` (the store makes
   * one per consume); a waiting gcra consume's own wait cap in whole ms (see `waitTicket`).
   * `holdMs`: several policies that wait decided together reserve at one time, the longest of
   * their delays: a reserving policy records its admission as of `nowMs + holdMs`.
   */
  check(
    state: S | undefined,
    nowMs: number,
    policy: Policy,
    cost: number,
    reuse?: S,
    lease?: string,
    holdMs?: number,
  ): Outcome<S>
  refund(
    state: S | undefined,
    nowMs: number,
    policy: Policy,
    cost: number,
    ticket?: string,
  ): RefundOutcome<S>
  /**
   * A penalty: counts `cost` (an integer >= 1) as if admitted, past the limit (no check). The
   * decision afterwards is a peek (`check` with cost 0). Absent for `concurrency`: a penalty is
   * not a lease.
   */
  penalize?(state: S | undefined, nowMs: number, policy: Policy, cost: number): RefundOutcome<S>
}

/** ceil(a / b) for integers a >= 0, b > 0 below 2^51: exact in IEEE doubles (as in Redis Lua). */
export function ceilDiv(a: number, b: number): number {
  return Math.ceil(a / b)
}

/** floor(a / b) for integers a >= 0, b > 0 below 2^51. */
export function floorDiv(a: number, b: number): number {
  return Math.floor(a / b)
}
