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
/** The longest delay Node's timers keep (2^31 - 1 ms, about 24.8 days); longer ones fire at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1

const PATTERN = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/

/**
 * Converts a duration to a positive integer number of milliseconds, at most `maxMs` if given.
 *
 * @example
 * parseDuration('15m', 'window') // 900000
 */
export function parseDuration(value: unknown, option: string, maxMs?: number): number {
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
  if (maxMs !== undefined && ms > maxMs) {
    const why =
      maxMs === MAX_TIMER_MS
        ? `must be at most ${MAX_TIMER_MS} ms (2^31 - 1, about 24.8 days): it becomes a timer, and Node fires a longer one at once`
        : `must be at most ${maxMs} ms`
    throw new LimiterRangeError(option, value, why)
  }
  return ms
}
