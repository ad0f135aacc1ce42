// token-bucket: tokens + timestamp; capacity `burst`, refilled at `limit` per window, starts full.
import {
  type AlgorithmTwin,
  ceilDiv,
  floorDiv,
  type Outcome,
  type RefundOutcome,
} from './outcome.js'

/**
 * State in integer units: one token is `scaleMs` units (the window when it was written), and
 * the bucket refills `limit` units per ms. `atMs` is when `units` was computed.
 */
export interface TokenBucketState {
  readonly units: number
  readonly atMs: number
  readonly scaleMs: number
}

function tokensNow(
  state: TokenBucketState | undefined,
  nowMs: number,
  limit: number,
  w: number,
  capacity: number,
): number {
  if (state === undefined) return capacity
  let units = state.units
  // A changed window rescales the state, rounding toward fewer tokens.
  if (state.scaleMs !== w) units = Math.floor((units * w) / state.scaleMs)
  const elapsed = Math.max(0, nowMs - state.atMs)
  return Math.min(capacity, units + elapsed * limit)
}

/**
 * Token bucket: holds up to `burst` tokens, gains `limit` tokens per window, starts full; a
 * request of cost `c` takes `c` tokens or is rejected without taking any.
 */
export const tokenBucket: AlgorithmTwin<TokenBucketState> = {
  check(state, nowMs, policy, cost): Outcome<TokenBucketState> {
    const { limit, windowMs: w, burst } = policy
    const capacity = burst * w
    const peek = cost === 0
    const need = (peek ? 1 : cost) * w
    let units = tokensNow(state, nowMs, limit, w, capacity)
    const allowed = units >= need
    if (allowed && !peek) units -= need
    const toFullMs = ceilDiv(capacity - units, limit)
    return {
      allowed,
      remaining: floorDiv(units, w),
      resetMs: toFullMs,
      retryAfterMs: allowed ? 0 : ceilDiv(need - units, limit),
      state: allowed && !peek ? { units, atMs: nowMs, scaleMs: w } : undefined,
      ttlMs: toFullMs,
    }
  },
  refund(state, nowMs, policy, cost): RefundOutcome<TokenBucketState> {
    const { limit, windowMs: w, burst } = policy
    const capacity = burst * w
    const units = Math.min(capacity, tokensNow(state, nowMs, limit, w, capacity) + cost * w)
    if (units >= capacity) return { state: null, ttlMs: 0 }
    return { state: { units, atMs: nowMs, scaleMs: w }, ttlMs: ceilDiv(capacity - units, limit) }
  },
}
