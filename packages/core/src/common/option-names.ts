// Option names: unknown ones are refused with a suggestion, and options are read as own properties.
import { wholeUnit } from './duration.js'
import { LimiterRangeError, LimiterTypeError } from './errors.js'

// Names users bring from other rate limiters, and what they are called here.
const PEER_NAMES: ReadonlyMap<string, string> = new Map([
  ['max', 'limit'],
  ['points', 'limit'],
  ['windowMs', 'window'],
  ['timeWindow', 'window'],
  ['duration', 'window'],
  ['ttl', 'window'],
  ['blockDuration', 'limiter.block'],
  ['keyGenerator', 'key'],
  ['keyPrefix', 'prefix'],
  ['nameSpace', 'prefix'],
  ['handler', 'onLimited'],
  ['onLimitReached', 'onLimited'],
  ['onExceeded', 'onLimited'],
  ['errorResponseBuilder', 'message'],
  ['standardHeaders', 'headers'],
  ['legacyHeaders', 'headers'],
  ['enableDraftSpec', 'headers'],
  ['addHeaders', 'headers'],
  ['client', 'redis'],
  ['storeClient', 'redis'],
  ['status', 'statusCode'],
  ['allowList', 'skip'],
  ['whitelist', 'skip'],
  ['blacklist', 'deny'],
  ['blockList', 'deny'],
  ['denyList', 'deny'],
  ['dryRun', 'mode'],
  ['shadow', 'mode'],
  ['skipOnError', 'failureMode'],
  ['passOnStoreError', 'failureMode'],
  ['insuranceLimiter', 'failureMode'],
  // waiting instead of refusing (express-slow-down, rate-limiter-flexible's execEvenly)
  ['delayMs', 'maxDelay'],
  ['maxDelayMs', 'maxDelay'],
  ['execEvenly', 'maxDelay'],
  ['execEvenlyMinDelayMs', 'maxDelay'],
])

// `ms`-package words (@fastify/rate-limit's `timeWindow: '1 minute'`) and the suffix they become.
const WORDS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^(ms|msecs?|milliseconds?)$/, 'ms'],
  [/^(s|secs?|seconds?)$/, 's'],
  [/^(m|mins?|minutes?)$/, 'm'],
  [/^(h|hrs?|hours?)$/, 'h'],
  [/^(d|days?)$/, 'd'],
]

/** `ms` milliseconds as a duration string in its largest whole unit: `'1m'`, `'90s'`, `'60ms'`. */
function msString(ms: number): string {
  const unit = wholeUnit(ms)
  return unit === undefined ? `'${ms}ms'` : `'${unit.count}${unit.suffix}'`
}

/** A peer's duration `value` counted in `unitMs` as a duration string here, if it is one. */
function converted(value: unknown, unitMs: number): string | undefined {
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) {
    const ms = value * unitMs
    if (!Number.isInteger(ms)) return undefined
    return unitMs === 1000 ? `'${value}s'` : msString(ms)
  }
  if (typeof value !== 'string') return undefined
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value)
  if (match === null) return undefined
  if (match[2] === '') return converted(Number(match[1]), unitMs)
  const word = (match[2] as string).toLowerCase()
  const suffix = WORDS.find(([pattern]) => pattern.test(word))?.[1]
  return suffix === undefined ? undefined : `'${match[1]}${suffix}'`
}

const as = (option: string, value: unknown, unitMs: number, example: string): string =>
  `\`${option}: ${converted(value, unitMs) ?? example}\``

// Peer names for durations: each peer's unit, and the replacement with the value converted, so
// rate-limiter-flexible's `duration: 60` (seconds) never becomes `window: 60` (60 ms) here.
const PEER_DURATIONS: ReadonlyMap<string, (value: unknown) => string> = new Map([
  [
    'duration',
    (v: unknown) =>
      `rate-limiter-flexible's \`duration\` is in seconds: use ${as('window', v, 1000, "'60s'")}; koa-ratelimit's is in milliseconds: use ${as('window', v, 1, "'1m'")}`,
  ],
  [
    'ttl',
    (v: unknown) =>
      `@nestjs/throttler's \`ttl\` is in milliseconds (v5 and later): use ${as('window', v, 1, "'1m'")}; in seconds before v5: use ${as('window', v, 1000, "'60s'")}`,
  ],
  [
    'windowMs',
    (v: unknown) =>
      `express-rate-limit's \`windowMs\` is in milliseconds: use ${as('window', v, 1, "'15m'")}`,
  ],
  [
    'timeWindow',
    (v: unknown) =>
      `@fastify/rate-limit's \`timeWindow\` is milliseconds or a string such as '1 minute': use ${as('window', v, 1, "'1m'")}`,
  ],
  [
    'blockDuration',
    (v: unknown) =>
      `there is no block option: call \`limiter.block(key, duration)\` when a key should be blocked (a limiter's \`onLimited\`, say); rate-limiter-flexible's \`blockDuration\` is in seconds: use \`limiter.block(key, ${converted(v, 1000) ?? "'15m'"})\`; @nestjs/throttler's is in milliseconds: use \`limiter.block(key, ${converted(v, 1) ?? "'15m'"})\``,
  ],
])

// Peer names with no option here, and what to do instead (express-rate-limit, hono-rate-limiter).
const WHERE_DECISION =
  "the decision is always at `rateLimit`: `req.rateLimit` (Express, Fastify), `ctx.state.rateLimit` (Koa), `c.get('rateLimit')` (Hono)"
const PEER_NOTES: ReadonlyMap<string, string> = new Map([
  ['requestPropertyName', `there is no such option: ${WHERE_DECISION}`],
  ['requestStorePropertyName', `there is no such option: ${WHERE_DECISION}`],
])

/**
 * The hint for a `limit` that is a function (express-rate-limit's and hono-rate-limiter's
 * `limit: (req) => n`): here a limit per request is a plan from `limits`.
 */
export function limitValueHint(option: string, value: unknown): string {
  if (option !== 'limit' || typeof value !== 'function') return ''
  return " (a limit that depends on the request is `limits: (req) => ({ limit: n, window: '1m' })`, each plan with its own counters)"
}

/**
 * What to tell a user who passed the unknown option `name` with `value`: the option meant, and
 * for a peer library's duration the peer's unit and the replacement with `value` converted.
 */
export function optionHint(name: string, value: unknown, known: Iterable<string>): string {
  const note = PEER_NOTES.get(name)
  if (note !== undefined) return ` (${note})`
  const meant = suggestOption(name, known)
  if (meant === undefined) return ''
  const units = PEER_DURATIONS.get(name)
  return ` (did you mean \`${meant}\`?${units === undefined ? '' : ` ${units(value)}`})`
}

/**
 * Edit distance between `a` and `b` (optimal string alignment: insertions, deletions,
 * substitutions and swaps of neighbours each cost 1), ignoring case.
 */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase()
  const t = b.toLowerCase()
  let before: number[] = []
  let previous = Array.from({ length: t.length + 1 }, (_, j) => j)
  for (let i = 1; i <= s.length; i++) {
    const row = [i]
    for (let j = 1; j <= t.length; j++) {
      const same = s[i - 1] === t[j - 1]
      let d = Math.min(
        (previous[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (previous[j - 1] as number) + (same ? 0 : 1),
      )
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1])
        d = Math.min(d, (before[j - 2] as number) + 1)
      row.push(d)
    }
    before = previous
    previous = row
  }
  return previous[t.length] as number
}

/** The option `name` most likely meant: a peer library's name for it, or the closest spelling. */
export function suggestOption(name: string, known: Iterable<string>): string | undefined {
  const peer = PEER_NAMES.get(name)
  if (peer !== undefined) return peer
  let best: string | undefined
  let bestDistance = Math.max(1, Math.floor(name.length / 3)) + 1
  for (const candidate of known) {
    const d = editDistance(name, candidate)
    if (d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  return best
}

/**
 * Refuses an option name that is not in `known`, with a suggestion when one is likely (`at`
 * prefixes the name in the error, as in `limits[0].`). Only own properties count: `__proto__`, `constructor` and the like are unknown names like any other.
 */
export function checkOptionNames(options: object, known: ReadonlySet<string>, at = ''): void {
  for (const name of Object.keys(options)) {
    if (known.has(name)) continue
    const value: unknown = (options as Record<string, unknown>)[name]
    throw new LimiterRangeError(
      `${at}${name}`,
      value,
      `is not an option${optionHint(name, value, known)}`,
    )
  }
}

/**
 * The options object's own enumerable properties on an object with no prototype, so a polluted
 * `Object.prototype` (say `Object.prototype.skip`, from another library's bug) cannot set one.
 * Symbol-keyed properties (the test clock) are copied too.
 */
export function ownOptions<T extends object>(options: T, option = 'options'): T {
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    throw new LimiterTypeError(option, options, 'an object')
  const copy = Object.create(null) as Record<PropertyKey, unknown>
  for (const key of Reflect.ownKeys(options)) {
    if (Object.prototype.propertyIsEnumerable.call(options, key))
      copy[key] = (options as Record<PropertyKey, unknown>)[key]
  }
  return copy as T
}

/** `value[name]` if it is `value`'s own property, else `undefined` (for nested option objects). */
export function own(value: object, name: string): unknown {
  return Object.hasOwn(value, name) ? (value as Record<string, unknown>)[name] : undefined
}
