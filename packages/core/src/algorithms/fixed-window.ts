// fixed-window: one counter per key; a window opens at the key's first admitted request.
import type { AlgorithmTwin, Outcome, RefundOutcome } from './outcome.js'

/** State: the window's start (ms) and the cost counted in it. */
export interface FixedWindowState {
  readonly startMs: number
  readonly count: number
}

/**
 * Fixed window: at most `limit` cost per window. A key's window opens at its first admitted
 * request and lasts `window` ms; the next admitted request after that opens a new one.
 */
export const fixedWindow: AlgorithmTwin<FixedWindowState> = {
  check(state, nowMs, policy, cost): Outcome<FixedWindowState> {
    const { limit, windowMs } = policy
    const peek = cost === 0
    const need = peek ? 1 : cost
    let startMs = nowMs
    let count = 0
    if (state !== undefined && nowMs < state.startMs + windowMs) {
      startMs = state.startMs
      count = state.count
    }
    const allowed = count + need <= limit
    if (allowed && !peek) count += need
    const windowLeftMs = startMs + windowMs - nowMs
    return {
      allowed,
      remaining: Math.max(0, limit - count),
      resetMs: count === 0 ? 0 : windowLeftMs,
      retryAfterMs: allowed ? 0 : windowLeftMs,
      state: allowed && !peek ? { startMs, count } : undefined,
      ttlMs: windowLeftMs,
    }
  },
  refund(state, nowMs, policy, cost): RefundOutcome<FixedWindowState> {
    // A window refunded to zero is deleted: its key must not outlive an empty state.
    if (state === undefined || nowMs >= state.startMs + policy.windowMs || state.count <= cost)
      return { state: null, ttlMs: 0 }
    return {
      state: { startMs: state.startMs, count: state.count - cost },
      ttlMs: state.startMs + policy.windowMs - nowMs,
    }
  },
}
