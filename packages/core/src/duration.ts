// Duration parsing: user-facing strings such as '15m' become integer milliseconds once, at the edge.
import { LimiterRangeError, LimiterTypeError } from './errors.js'

/** A duration: integer milliseconds, or a string such as `'500ms'`, `'10s'`, `'15m'`, `'1h'`, `'1d'`. */
export type Duration = number | `${number}${'ms' | 's' | 'm' | 'h' | 'd'}` | (string & {})

const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
}
const PATTERN = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/

/**
 * Converts a duration to a positive integer number of milliseconds.
 *
 * @example
 * parseDuration('15m', 'window') // 900000
 */
export function parseDuration(value: unknown, option: string): number {
  let ms: number
  if (typeof value === 'number') {
    ms = value
  } else if (typeof value === 'string') {
    const match = PATTERN.exec(value)
    if (!match) {
      throw new LimiterTypeError(
        option,
        value,
        "a number of milliseconds or a string such as '500ms', '10s', '15m', '1h', '1d'",
      )
    }
    ms = Number(match[1]) * (UNIT_MS[match[2] as string] as number)
  } else {
    throw new LimiterTypeError(option, value, "a number of milliseconds or a string such as '10s'")
  }
  if (!Number.isFinite(ms) || ms < 1 || !Number.isInteger(ms)) {
    throw new LimiterRangeError(option, value, 'must be a whole number of milliseconds, at least 1')
  }
  return ms
}
