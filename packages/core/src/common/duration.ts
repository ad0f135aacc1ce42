// Duration parsing: user-facing strings such as '15m' become integer milliseconds once, at the edge.
import { LimiterRangeError, LimiterTypeError } from './errors.js'

/** A duration: integer milliseconds, or a string such as `'500ms'`, `'10s'`, `'15m'`, `'1h'`, `'1d'`. */
export type Duration = number | `${number}${'ms' | 's' | 'm' | 'h' | 'd'}` | (string & {})

// The units durations are written in, largest first: suffix, word, size in ms. The one table
// parsing, default names and problem texts all read.
const UNITS: ReadonlyArray<readonly [suffix: string, word: string, ms: number]> = [
  ['d', 'day', 86_400_000],
  ['h', 'hour', 3_600_000],
  ['m', 'minute', 60_000],
  ['s', 'second', 1000],
]
const UNIT_MS: Readonly<Record<string, number>> = Object.fromEntries([
  ['ms', 1],
  ...UNITS.map(([suffix, , ms]) => [suffix, ms]),
])

/**
 * `ms` in its largest whole unit from days down to seconds (`90_000` -> 90 `s`), or `undefined`
 * when it is not a whole number of seconds.
 */
export function wholeUnit(
  ms: number,
): { readonly count: number; readonly suffix: string; readonly word: string } | undefined {
  for (const [suffix, word, size] of UNITS)
    if (ms % size === 0) return { count: ms / size, suffix, word }
  return undefined
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
  const ms = givenMs(value, option)
  if (!Number.isFinite(ms) || ms < 1 || !Number.isInteger(ms)) {
    throw new LimiterRangeError(option, value, 'must be a whole number of milliseconds, at least 1')
  }
  return atMost(ms, value, option, maxMs)
}

// `ms`-package words (@fastify/rate-limit's `timeWindow: '1 minute'`) and the suffix they become.
const WORDS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^(ms|msecs?|milliseconds?)$/, 'ms'],
  [/^(s|secs?|seconds?)$/, 's'],
  [/^(m|mins?|minutes?)$/, 'm'],
  [/^(h|hrs?|hours?)$/, 'h'],
  [/^(d|days?)$/, 'd'],
]

/** A duration in words (`'1 minute'`, `'2 hours'`) as written here (`'1m'`, `'2h'`), if it is one. */
export function spokenDuration(value: string): string | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*$/i.exec(value)
  if (match === null) return undefined
  const word = (match[2] as string).toLowerCase()
  const suffix = WORDS.find(([pattern]) => pattern.test(word))?.[1]
  return suffix === undefined ? undefined : `${match[1]}${suffix}`
}

// A duration's milliseconds as written (any number; a string by its unit), not yet checked.
function givenMs(value: unknown, option: string): number {
  if (typeof value === 'number') return value
  if (typeof value === 'string') {
    const match = PATTERN.exec(value)
    if (!match) {
      const spoken = spokenDuration(value)
      throw new LimiterTypeError(
        option,
        value,
        spoken === undefined || PATTERN.exec(spoken) === null
          ? "a number of milliseconds or a string such as '500ms', '10s', '15m', '1h', '1d'"
          : `a number of milliseconds or a string such as '500ms', '10s', '15m', '1h', '1d' (did you mean '${spoken}'?)`,
      )
    }
    return Number(match[1]) * (UNIT_MS[match[2] as string] as number)
  }
  throw new LimiterTypeError(option, value, "a number of milliseconds or a string such as '10s'")
}

// `ms`, unless above `maxMs`.
function atMost(ms: number, value: unknown, option: string, maxMs: number | undefined): number {
  if (maxMs !== undefined && ms > maxMs) {
    const why =
      maxMs === MAX_TIMER_MS
        ? `must be at most ${MAX_TIMER_MS} ms (2^31 - 1, about 24.8 days): it becomes a timer, and Node fires a longer one at once`
        : `must be at most ${maxMs} ms`
    throw new LimiterRangeError(option, value, why)
  }
  return ms
}

// The bare-number durations already warned about, by what they were for and their value: one
// warning each (a migration copies several tiers, `duration: 1`, `60`, `86400`, and each is
// wrong), at most WARNED_MAX in a process (block durations may be computed per request).
const warned = new Set<string>()
const WARNED_MAX = 64

/**
 * Warns once per process and value (code `LIMITER_SMALL_WINDOW`) when `value`, a `window`, a block's
 * duration or a concurrency policy's `retryAfter`, is a bare number below 1000: milliseconds
 * here, where rate-limiter-flexible and @nestjs/throttler before v5 count seconds (and
 * @fastify/under-pressure its `retryAfter`), so `60` is likely meant as `'60s'`. Strings
 * (`'500ms'`) say their unit and never warn. A number warns when it looks like seconds: under
 * 1000, or a whole number of minutes as seconds that is no whole second as ms (3600, 86400).
 * `what` names the option (`window`, `retryAfter`) or the call (`limiter.block`); `peer` says
 * who counts it in seconds.
 */
export function warnBareMilliseconds(
  value: unknown,
  what: string,
  peer = 'rate-limiter-flexible counts seconds',
): void {
  if (typeof value !== 'number' || !secondsLike(value)) return
  const seen = `${what}=${value}`
  if (warned.has(seen) || warned.size >= WARNED_MAX) return
  warned.add(seen)
  const shown = what.startsWith('limiter.') ? `${what}(key, ${value})` : `${what}: ${value}`
  const unit = value < 1000 ? undefined : wholeUnit(value * 1000)
  const meant = unit === undefined ? `${value}s` : `${unit.count}${unit.suffix}`
  const ms = value < 1000 ? `${value} ms` : `${value} ms (${value / 1000} s)`
  process.emitWarning(
    `${shown} is ${ms}; if you meant ${value} seconds write '${meant}' (a bare number is milliseconds here; ${peer}). Write '${value}ms' to say milliseconds and silence this, or run node with --disable-warning=LIMITER_SMALL_WINDOW.`,
    { type: 'LimiterWarning', code: 'LIMITER_SMALL_WINDOW' },
  )
}

// A bare number more likely meant as seconds: under 1000, or a whole number of minutes as
// seconds (3600, 86400) that is no whole number of seconds as ms.
function secondsLike(value: number): boolean {
  return value < 1000 || (value % 60 === 0 && value % 1000 !== 0)
}

/** Forgets which warnings were given (for tests). */
export function resetDurationWarnings(): void {
  warned.clear()
}

/**
 * A wait such as `maxWait` or `maxDelay`: 0 (`zero` says what that means) or a duration up to
 * Node's longest timer, `0`, `'0ms'` and `'0s'` alike.
 */
export function parseWait(
  value: unknown,
  option: string,
  zero = 'take a free slot or be refused at once',
): number {
  const ms = givenMs(value, option)
  if (!Number.isFinite(ms) || ms < 0 || !Number.isInteger(ms))
    throw new LimiterRangeError(
      option,
      value,
      `must be a whole number of milliseconds, 0 or more (0: ${zero})`,
    )
  return atMost(ms, value, option, MAX_TIMER_MS)
}
