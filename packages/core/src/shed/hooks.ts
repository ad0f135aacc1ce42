// What tests inject into a shedder or an adaptive limit: a clock, randomness, signal readings,
// and manual intervals. Tests reach it by module path; it is no part of the public API.
import type { SignalSource } from './signals.js'

/** The option key of {@link ShedHooks}: a registered symbol, so no string option sets it. */
export const SHED_HOOKS: unique symbol = Symbol.for('@limiter/core.shed-hooks') as never

/** Test hooks: every field replaces the real thing. */
export interface ShedHooks {
  /** Monotonic ms (default `performance.now()`). */
  readonly now?: () => number
  /** In [0, 1) (default `Math.random`): the probes' jitter. */
  readonly random?: () => number
  /** The process's signals (default the real event loop and heap). */
  readonly signals?: SignalSource
  /** No timer: intervals pass only when the test calls `tickShedder`. */
  readonly manual?: boolean
}

/** The hooks in `options`, if a test put any there. */
export function hooksOf(options: object): ShedHooks {
  return ((options as Record<symbol, unknown>)[SHED_HOOKS] as ShedHooks | undefined) ?? {}
}
