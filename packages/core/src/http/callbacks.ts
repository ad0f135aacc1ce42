// Running the user's option callbacks: a value or a promise, and errors that name the option.
import { LimiterError, type LimiterErrorCode } from '../common/errors.js'

/** The error for an option whose callback misbehaved. */
export function misbehaved(
  option: string,
  what: string,
  code: LimiterErrorCode,
  cause?: unknown,
): LimiterError {
  return new LimiterError(
    code,
    `rateLimit option \`${option}\` ${what}`,
    cause === undefined ? undefined : { cause },
  )
}

/** A value, or a promise of one: what each step of a check returns. */
export type MaybePromise<T> = T | Promise<T>

/** Whether `value` is a promise (or any thenable) rather than a plain value. */
export function isThenable<T>(value: MaybePromise<T> | PromiseLike<T>): value is PromiseLike<T> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  )
}

// What a callback that throws may have taken for something else (express-rate-limit calls its
// `message(req, res)` with the response).
const SIGNATURES: Readonly<Record<string, string>> = {
  message:
    ' (it is called as message(req, decision): the second argument is the Decision, not the response, which the adapter sends; return the body)',
}

function threw(option: string, code: LimiterErrorCode, error: unknown): LimiterError {
  return misbehaved(
    option,
    `threw: ${error instanceof Error ? error.message : String(error)}${SIGNATURES[option] ?? ''}`,
    code,
    error,
  )
}

// Runs a user callback; its throw or rejection becomes a LimiterError naming the option.
export function invoke<T>(
  option: string,
  code: LimiterErrorCode,
  run: () => T | PromiseLike<T>,
): MaybePromise<T> {
  let value: T | PromiseLike<T>
  try {
    value = run()
  } catch (error) {
    throw threw(option, code, error)
  }
  if (!isThenable(value)) return value
  return Promise.resolve(value).then(undefined, (error: unknown) => {
    throw threw(option, code, error)
  })
}
