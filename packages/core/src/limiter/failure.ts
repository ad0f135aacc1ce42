// Failure policy: the failure behind a decision, normalising errors, and the default error reporter.
import { nowMs } from '../common/clock.js'
import { LimiterError } from '../common/errors.js'
import { type Decision, LimiterDecision } from '../decision/decision.js'
import { errorCode } from '../stores/redis-client.js'
import type { ErrorContext, FailureMode } from './types.js'

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

// A window for people: `10 s`, `15 min`, `1 h`, `2 d`.
function shownWindow(ms: number): string {
  if (ms < 1000) return `${ms} ms`
  const [unit, size] =
    ms >= 86_400_000
      ? ['d', 86_400_000]
      : ms >= 3_600_000
        ? ['h', 3_600_000]
        : ms >= 60_000
          ? ['min', 60_000]
          : ['s', 1000]
  return `${Math.round((ms / (size as number)) * 10) / 10} ${unit}`
}

// The longest window among the limiter's policies (`concurrency` ones only, for a lease).
function windowOf(context: ErrorContext, leases: boolean): string {
  let most = 0
  for (const p of context.limiter.policies)
    if (!leases || p.algorithm === 'concurrency') most = Math.max(most, p.windowMs)
  return shownWindow(most)
}

/**
 * What the failure means, for the default warning: a decision answers from `failureMode`; a
 * failed release, refund or reset changes no decision (it leaves state to expire).
 */
export function failureConsequence(context: ErrorContext): string {
  switch (context.operation) {
    case 'release':
      return `release failed: the lease expires after its window (${windowOf(context, true)})`
    case 'refund':
      return `refund failed: the cost stays counted until its window passes (${windowOf(context, false)})`
    case 'reset':
      return 'reset failed: the key keeps its counts'
    default:
      return DOING[context.failureMode]
  }
}

/**
 * The default `onError`: one warning line at most every 30 s for failed decisions, and as much
 * for failed releases, refunds and resets.
 */
export function defaultOnError(): (error: LimiterError, context: ErrorContext) => void {
  let decideMs = Number.NEGATIVE_INFINITY
  let giveBackMs = Number.NEGATIVE_INFINITY
  return (error, context) => {
    // One line at most every 30 s: an outage must not flood the app's logs.
    const now = nowMs()
    const decide = context.operation === 'decide'
    if (now - (decide ? decideMs : giveBackMs) < 30_000) return
    if (decide) decideMs = now
    else giveBackMs = now
    console.warn(
      `[@limiter/core] ${error.message}; ${failureConsequence(context)} (limiter ${JSON.stringify(context.limiter.name)}; further ${decide ? 'store errors' : 'failed releases, refunds and resets'} muted for 30 s; pass onError to handle them)`,
    )
  }
}
