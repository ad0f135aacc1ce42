// Error types: option errors thrown at construction, LimiterError for store failures.
import type { Decision } from '../decision/types.js'

/** Codes carried by every error this package throws. */
export type LimiterErrorCode =
  | 'ERR_LIMITER_OPTION'
  | 'ERR_LIMITER_KEY'
  | 'ERR_LIMITER_COST'
  | 'ERR_LIMITER_STORE'
  | 'ERR_LIMITER_TIMEOUT'
  | 'ERR_LIMITER_CIRCUIT_OPEN'
  | 'ERR_LIMITER_CONFLICT'
  | 'ERR_LIMITER_REFUSED'
  | 'ERR_LIMITER_UNSUPPORTED'

/**
 * A short description of a bad value for error messages: strings quoted (cut at 80 characters),
 * `an empty string`, `an object`, `an array`, `a function`, `null`; with `typed`, numbers and
 * booleans name their type (`number NaN`), as a callback's bad return value reads best.
 */
export function describeValue(value: unknown, typed = false): string {
  if (typeof value === 'string') {
    if (value === '') return 'an empty string'
    return JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value)
  }
  if (typeof value === 'bigint') return typed ? `bigint ${value}n` : `${value}n`
  if (typeof value === 'function') return 'a function'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object') return 'an object'
  if (typed && value !== undefined) return `${typeof value} ${String(value)}`
  return String(value)
}

/**
 * A bad option or argument with the wrong type. `option` names it and `value` holds what was given.
 */
export class LimiterTypeError extends TypeError {
  readonly code: LimiterErrorCode
  readonly option: string
  readonly value: unknown
  constructor(
    option: string,
    value: unknown,
    expected: string,
    code: LimiterErrorCode = 'ERR_LIMITER_OPTION',
  ) {
    super(`Invalid \`${option}\`: expected ${expected}, got ${describeValue(value)}.`)
    this.name = 'LimiterTypeError'
    this.code = code
    this.option = option
    this.value = value
  }
}

/**
 * An option or argument of the right type but outside what the limiter can honour.
 */
export class LimiterRangeError extends RangeError {
  readonly code: LimiterErrorCode
  readonly option: string
  readonly value: unknown
  constructor(
    option: string,
    value: unknown,
    expected: string,
    code: LimiterErrorCode = 'ERR_LIMITER_OPTION',
  ) {
    super(`Invalid \`${option}\`: ${expected}, got ${describeValue(value)}.`)
    this.name = 'LimiterRangeError'
    this.code = code
    this.option = option
    this.value = value
  }
}

/**
 * A store failed, timed out or was skipped by the circuit breaker: the limiter hands it to
 * `onError` and answers from its `failureMode`; it never reaches the request unless you rethrow
 * it. Or (`ERR_LIMITER_REFUSED`) `limiter.acquire` could not get a slot in time: `decision` is
 * the refusal.
 */
export class LimiterError extends Error {
  readonly code: LimiterErrorCode
  /** For a store failure: where the store is (`host:port`, a Cluster's seed nodes, a Sentinel name). */
  readonly address: string | undefined
  /** For a store failure: the client's last connection error (`ECONNREFUSED`, `NOAUTH`, ...), if any. */
  readonly clientError: string | undefined
  /** For `ERR_LIMITER_REFUSED`: the refused decision (`retryAfterMs` says when to try again). */
  readonly decision: Decision | undefined
  constructor(code: LimiterErrorCode, message: string, options?: LimiterErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'LimiterError'
    this.code = code
    this.address = options?.address
    this.clientError = options?.clientError
    this.decision = options?.decision
  }
}

/** What a {@link LimiterError} may carry besides its code and message. */
export interface LimiterErrorOptions {
  readonly cause?: unknown
  readonly address?: string | undefined
  readonly clientError?: string | undefined
  readonly decision?: Decision | undefined
}
