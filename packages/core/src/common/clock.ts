// The one place that reads the wall clock. Stores on Redis never use it: scripts read Redis TIME.

/** Milliseconds since the epoch, from this process's clock. */
export function nowMs(): number {
  return Date.now()
}

/** Monotonic milliseconds (never jumps with wall-clock changes), for local timing. */
export function monotonicMs(): number {
  return performance.now()
}

/**
 * The option key under which tests inject a clock (see `@limiter/core/testing`). A registered
 * symbol so the ESM and CJS builds agree; no string option can set it by accident.
 */
export const CLOCK: unique symbol = Symbol.for('@limiter/core.clock') as never
