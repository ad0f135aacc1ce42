// @limiter/core/testing: helpers for tests only. Never import this in production code.
import { CLOCK } from '../common/clock.js'
import type { LimiterOptions } from '../limiter/create-limiter.js'

export { TWINS } from '../algorithms/index.js'
export type { AlgorithmTwin, Outcome, RefundOutcome } from '../algorithms/outcome.js'

/**
 * Returns limiter options whose decisions use `clock()` (ms) instead of the store's own clock
 * (Redis `TIME` or `Date.now()`), so tests can compare algorithms step by step.
 *
 * @example
 * let now = 1_000_000
 * const limiter = createLimiter(withClock({ limit: 5, window: '1s', store }, () => now))
 */
export function withClock<T extends LimiterOptions>(options: T, clock: () => number): T {
  return { ...options, [CLOCK]: clock }
}
