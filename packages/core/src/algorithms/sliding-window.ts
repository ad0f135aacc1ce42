// sliding-window: two counters per key, weighted by the overlap of the previous window.
import {
  type AlgorithmTwin,
  floorDiv,
  type Outcome,
  type RefundOutcome,
  type Writable,
} from './outcome.js'

/** State: the start of the window `count` belongs to (a multiple of the window) and that count. */
export interface SlidingWindowState {
  readonly startMs: number
  readonly count: number
  /** The count of the window before `startMs`. */
  readonly previous: number
}

/**
 * Sliding window counter. Windows are aligned to multiples of `window` since the epoch (Redis
 * time); a request is admitted when
 * `previous * (window - elapsed) / window + current + cost <= limit`.
 * All arithmetic is on integers scaled by `window`, so both twins agree exactly.
 */
export const slidingWindow: AlgorithmTwin<SlidingWindowState> = {
  check(state, nowMs, policy, cost, reuse): Outcome<SlidingWindowState> {
    const { limit, windowMs: w } = policy
    const peek = cost === 0
    const need = peek ? 1 : cost
    const startMs = nowMs - (nowMs % w)
    // countsAt's rule, inline: the hot path allocates nothing
    let current = 0
    let previous = 0
    if (state !== undefined) {
      if (state.startMs >= startMs) {
        current = state.count
        previous = state.previous
      } else if (state.startMs >= startMs - w) {
        previous = state.count
      }
    }
    const elapsed = nowMs - startMs
    const allowed = previous * (w - elapsed) + (current + need) * w <= limit * w
    if (allowed && !peek) current += need
    let retryAfterMs = 0
    if (!allowed) retryAfterMs = waitMs(limit, w, elapsed, previous, current, need)
    const used = previous * (w - elapsed) + current * w
    const windowLeftMs = w - elapsed
    return {
      allowed,
      remaining: Math.max(0, floorDiv(limit * w - used, w)),
      resetMs: current > 0 ? windowLeftMs + w : previous > 0 ? windowLeftMs : 0,
      retryAfterMs,
      state: allowed && !peek ? written(reuse, startMs, current, previous) : undefined,
      ttlMs: windowLeftMs + w,
    }
  },
  refund(state, nowMs, policy, cost): RefundOutcome<SlidingWindowState> {
    const w = policy.windowMs
    const startMs = nowMs - (nowMs % w)
    if (state === undefined || state.startMs < startMs - w) return { state: null, ttlMs: 0 }
    const count = Math.max(0, state.count - cost)
    // The state matters until its last non-zero count leaves the estimate.
    const previous = state.startMs >= startMs ? state.previous : 0
    if (count === 0 && previous === 0) return { state: null, ttlMs: 0 }
    return {
      state: { startMs: state.startMs, count, previous: state.previous },
      ttlMs: state.startMs + (count > 0 ? 2 * w : w) - nowMs,
    }
  },
  penalize(state, nowMs, policy, cost): RefundOutcome<SlidingWindowState> {
    // counted in the current window, past the limit
    const w = policy.windowMs
    const startMs = nowMs - (nowMs % w)
    const { current, previous } = countsAt(state, startMs, w)
    return { state: { startMs, count: current + cost, previous }, ttlMs: startMs + 2 * w - nowMs }
  },
}

// The counts of the window starting at `startMs` and of the one before, as `state` holds them.
function countsAt(
  state: SlidingWindowState | undefined,
  startMs: number,
  w: number,
): { current: number; previous: number } {
  if (state === undefined || state.startMs < startMs - w) return { current: 0, previous: 0 }
  if (state.startMs >= startMs) return { current: state.count, previous: state.previous }
  return { current: 0, previous: state.count }
}

// The state { startMs, count, previous }, written into `reuse` when given.
function written(
  reuse: SlidingWindowState | undefined,
  startMs: number,
  count: number,
  previous: number,
): SlidingWindowState {
  if (reuse === undefined) return { startMs, count, previous }
  const s = reuse as Writable<SlidingWindowState>
  s.startMs = startMs
  s.count = count
  s.previous = previous
  return s
}

/** The smallest wait after which a request of cost `need` passes, given no other traffic. */
function waitMs(
  limit: number,
  w: number,
  elapsed: number,
  previous: number,
  current: number,
  need: number,
): number {
  // Later in this window: previous * (w - e) <= (limit - current - need) * w.
  const room = limit - current - need
  if (room >= 0 && previous > 0) {
    const most = floorDiv(room * w, previous)
    if (most >= 1) return w - most - elapsed
  }
  // In the next window `current` becomes the previous count and the new count starts at 0.
  if (current === 0) return w - elapsed
  const most = floorDiv((limit - need) * w, current)
  if (most >= 1) return w - elapsed + Math.max(0, w - most)
  // The window after that: both counts are gone.
  return 2 * w - elapsed
}
