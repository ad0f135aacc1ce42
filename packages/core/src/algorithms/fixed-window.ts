// fixed-window: one counter per key; a window opens at the key's first admitted request.
import type { AlgorithmTwin, Outcome, RefundOutcome, Writable } from './outcome.js'

/** State: when the window closes, and the cost counted in it. */
export interface FixedWindowState {
  /** When the window closes (on Redis: the key's expiry). */
  readonly endMs: number
  readonly count: number
}

// The open window's end (never later than a possibly shortened window from now), or undefined.
function openEnd(
  state: FixedWindowState | undefined,
  nowMs: number,
  windowMs: number,
): number | undefined {
  if (state === undefined) return undefined
  const endMs = Math.min(state.endMs, nowMs + windowMs)
  return endMs > nowMs ? endMs : undefined
}

// The state { endMs, count }, written into `reuse` when given.
function written(
  reuse: FixedWindowState | undefined,
  endMs: number,
  count: number,
): FixedWindowState {
  if (reuse === undefined) return { endMs, count }
  const s = reuse as Writable<FixedWindowState>
  s.endMs = endMs
  s.count = count
  return s
}

/**
 * Fixed window: at most `limit` cost per window. A key's window opens at its first admitted
 * request and lasts `window` ms; the next admitted request after that opens a new one. After a
 * policy change to a shorter window, an open window ends no later than the new length from the
 * first request that sees the change (admitted, refused or a peek: that request stores the end).
 */
export const fixedWindow: AlgorithmTwin<FixedWindowState> = {
  check(state, nowMs, policy, cost, reuse): Outcome<FixedWindowState> {
    const { limit, windowMs } = policy
    const peek = cost === 0
    const need = peek ? 1 : cost
    const openMs = openEnd(state, nowMs, windowMs)
    const endMs = openMs ?? nowMs + windowMs
    let count = openMs === undefined ? 0 : (state as FixedWindowState).count
    const allowed = count + need <= limit
    const admitted = allowed && !peek
    if (admitted) count += need
    const windowLeftMs = endMs - nowMs
    // A window shortened by a policy change keeps the end its first request saw, even when that
    // request is refused or peeks: recomputed from each later request, it would never end.
    const shortened = openMs !== undefined && openMs < (state as FixedWindowState).endMs
    return {
      allowed,
      remaining: Math.max(0, limit - count),
      resetMs: count === 0 ? 0 : windowLeftMs,
      retryAfterMs: allowed ? 0 : windowLeftMs,
      state: admitted || shortened ? written(reuse, endMs, count) : undefined,
      ttlMs: windowLeftMs,
    }
  },
  refund(state, nowMs, policy, cost): RefundOutcome<FixedWindowState> {
    const endMs = openEnd(state, nowMs, policy.windowMs)
    if (state === undefined || endMs === undefined || state.count <= cost)
      return { state: null, ttlMs: 0 }
    return { state: { endMs, count: state.count - cost }, ttlMs: endMs - nowMs }
  },
  penalize(state, nowMs, policy, cost): RefundOutcome<FixedWindowState> {
    // counted in the open window (or a new one), past the limit
    const openMs = openEnd(state, nowMs, policy.windowMs)
    const endMs = openMs ?? nowMs + policy.windowMs
    const count = openMs === undefined ? 0 : (state as FixedWindowState).count
    return { state: { endMs, count: count + cost }, ttlMs: endMs - nowMs }
  },
}
