// leaky-bucket: level + timestamp; the meter (policing) form that rejects what would overflow.
import {
  type AlgorithmTwin,
  ceilDiv,
  floorDiv,
  type Outcome,
  type RefundOutcome,
} from './outcome.js'

/**
 * State in integer units: one request is `scaleMs` units (the window when it was written), and
 * the level drains `limit` units per ms. `atMs` is when `units` was computed.
 */
export interface LeakyBucketState {
  readonly units: number
  readonly atMs: number
  readonly scaleMs: number
}

function levelNow(
  state: LeakyBucketState | undefined,
  nowMs: number,
  limit: number,
  w: number,
): number {
  if (state === undefined) return 0
  let units = state.units
  // A changed window rescales the state, rounding toward a fuller bucket.
  if (state.scaleMs !== w) units = Math.ceil((units * w) / state.scaleMs)
  const elapsed = Math.max(0, nowMs - state.atMs)
  return Math.max(0, units - elapsed * limit)
}

/**
 * Leaky bucket as a meter: the level drains at `limit` per window and holds at most `burst`; a
 * request of cost `c` raises it by `c` or, if that would overflow, is rejected.
 */
export const leakyBucket: AlgorithmTwin<LeakyBucketState> = {
  check(state, nowMs, policy, cost): Outcome<LeakyBucketState> {
    const { limit, windowMs: w, burst } = policy
    const capacity = burst * w
    const peek = cost === 0
    const need = (peek ? 1 : cost) * w
    let units = levelNow(state, nowMs, limit, w)
    const allowed = units + need <= capacity
    if (allowed && !peek) units += need
    const toEmptyMs = ceilDiv(units, limit)
    return {
      allowed,
      remaining: Math.max(0, floorDiv(capacity - units, w)),
      resetMs: toEmptyMs,
      retryAfterMs: allowed ? 0 : ceilDiv(units + need - capacity, limit),
      state: allowed && !peek ? { units, atMs: nowMs, scaleMs: w } : undefined,
      ttlMs: toEmptyMs,
    }
  },
  refund(state, nowMs, policy, cost): RefundOutcome<LeakyBucketState> {
    const { limit, windowMs: w } = policy
    const units = Math.max(0, levelNow(state, nowMs, limit, w) - cost * w)
    if (units === 0) return { state: null, ttlMs: 0 }
    return { state: { units, atMs: nowMs, scaleMs: w }, ttlMs: ceilDiv(units, limit) }
  },
}
