// gcra: one theoretical arrival time (TAT) per key.
import {
  type AlgorithmTwin,
  ceilDiv,
  floorDiv,
  type Outcome,
  type RefundOutcome,
} from './outcome.js'

/**
 * The TAT as an exact rational: `ms + frac / den` milliseconds, with `0 <= frac < den`.
 * `den` is the policy's `limit` when written, so the emission interval `window / limit` adds
 * exactly `window` to `frac`.
 */
export interface GcraState {
  readonly ms: number
  readonly frac: number
  readonly den: number
}

/** The TAT in the current denominator (`limit`), never earlier than now. */
function tatNow(
  state: GcraState | undefined,
  nowMs: number,
  limit: number,
): { ms: number; frac: number } {
  if (state === undefined || state.ms < nowMs) return { ms: nowMs, frac: 0 }
  let { ms, frac } = state
  if (state.den !== limit) {
    // A changed limit re-expresses the fraction, rounding the TAT later (never admits extra).
    frac = Math.ceil((frac * limit) / state.den)
    if (frac >= limit) {
      ms += 1
      frac -= limit
    }
  }
  return { ms, frac }
}

/**
 * GCRA: emission interval `T = window / limit`, burst tolerance `burst x T`. A request of cost
 * `c` moves the TAT to `max(TAT, now) + c x T` and is admitted when that is at most
 * `now + burst x T`. Decisions equal a token bucket's with the same numbers.
 */
export const gcra: AlgorithmTwin<GcraState> = {
  check(state, nowMs, policy, cost): Outcome<GcraState> {
    const { limit, windowMs: w, burst } = policy
    const tolerance = burst * w
    const peek = cost === 0
    const need = peek ? 1 : cost
    const tat = tatNow(state, nowMs, limit)
    const sum = tat.frac + need * w
    const nextMs = tat.ms + floorDiv(sum, limit)
    const nextFrac = sum % limit
    // Distances from now, in units of 1/limit ms.
    const ahead = (nextMs - nowMs) * limit + nextFrac
    const allowed = ahead <= tolerance
    const used = allowed && !peek ? ahead : (tat.ms - nowMs) * limit + tat.frac
    return {
      allowed,
      remaining: Math.max(0, floorDiv(tolerance - used, w)),
      resetMs: ceilDiv(used, limit),
      retryAfterMs: allowed ? 0 : ceilDiv(ahead - tolerance, limit),
      state: allowed && !peek ? { ms: nextMs, frac: nextFrac, den: limit } : undefined,
      ttlMs: ceilDiv(ahead, limit),
    }
  },
  refund(state, nowMs, policy, cost): RefundOutcome<GcraState> {
    const { limit, windowMs: w } = policy
    const tat = tatNow(state, nowMs, limit)
    const ahead = (tat.ms - nowMs) * limit + tat.frac - cost * w
    if (ahead <= 0) return { state: null, ttlMs: 0 }
    return {
      state: { ms: nowMs + floorDiv(ahead, limit), frac: ahead % limit, den: limit },
      ttlMs: ceilDiv(ahead, limit),
    }
  },
}
