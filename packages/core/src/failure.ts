// Failure policy: the failure behind a decision, normalising errors, and the default error reporter.
import { nowMs } from './clock.js'
import { type Decision, LimiterDecision } from './decision.js'
import { LimiterError } from './errors.js'
import type { ErrorContext, FailureMode } from './limiter-types.js'
import { errorCode } from './stores/redis-client.js'

/**
 * The store failure behind a decision, or `undefined` for a real decision. A limiter answering
 * from `failureMode: 'open'` or `'closed'` marks its decisions so adapters can answer a denial
 * caused by a store outage with 503 instead of 429.
 */
export function failureOf(decision: Decision): LimiterError | undefined {
  return LimiterDecision.failureOf(decision)
}

/** The error as a `LimiterError` (a store failure, with the original as `cause`). */
export function asLimiterError(cause: unknown): LimiterError {
  if (cause instanceof LimiterError) return cause
  const message = cause instanceof Error ? cause.message : String(cause)
  return new LimiterError('ERR_LIMITER_STORE', `Rate limit store failed: ${message}`, {
    cause,
    clientError: errorCode(cause),
  })
}

// What each failure mode does, for the default warning.
const DOING: Readonly<Record<FailureMode, string>> = {
  open: 'failing open: requests pass unlimited until it answers',
  closed: 'failing closed: requests are refused (503) until it answers',
  local: 'deciding locally: each process limits on its own until it answers',
}

/** The default `onError`: one warning line at most every 30 s. */
export function defaultOnError(): (error: LimiterError, context: ErrorContext) => void {
  let lastMs = 0
  return (error, context) => {
    // One line at most every 30 s: an outage must not flood the app's logs.
    const now = nowMs()
    if (now - lastMs < 30_000) return
    lastMs = now
    console.warn(
      `[@limiter/core] ${error.message}; ${DOING[context.failureMode]} (limiter ${JSON.stringify(context.limiter.name)}; further store errors muted for 30 s; pass onError to handle them)`,
    )
  }
}
