// A numeric option, checked at construction.
import { LimiterRangeError, LimiterTypeError } from '../common/errors.js'

/** `value` as a finite number in [lo, hi] (`hiOpen`: below hi), or `fallback` when undefined. */
export function numberIn(
  value: unknown,
  option: string,
  fallback: number,
  lo: number,
  hi: number,
  integer = false,
): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number') throw new LimiterTypeError(option, value, 'a number')
  if (
    !Number.isFinite(value) ||
    value < lo ||
    value > hi ||
    (integer && !Number.isInteger(value))
  ) {
    const what = integer ? 'a whole number' : 'a number'
    const range = hi === Number.MAX_SAFE_INTEGER ? `at least ${lo}` : `from ${lo} to ${hi}`
    throw new LimiterRangeError(option, value, `must be ${what} ${range}`)
  }
  return value
}
