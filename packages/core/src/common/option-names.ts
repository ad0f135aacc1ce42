// Option names: unknown ones are refused with a suggestion, and options are read as own properties.
import { spokenDuration, wholeUnit } from './duration.js'
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
  ['errorResponseBuilder', 'message'],
  ['standardHeaders', 'headers'],
  ['legacyHeaders', 'headers'],
  ['enableDraftSpec', 'headers'],
  ['addHeaders', 'headers'],
  ['addHeadersOnExceeding', 'headers'],
  ['groupId', 'name'],
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
  // koa-ratelimit, @nestjs/throttler, express-rate-limit
  ['id', 'key'],
  ['getTracker', 'key'],
  ['identifier', 'name'],
  ['errorMessage', 'message'],
  ['disableHeader', 'headers'],
  ['db', 'redis'],
  ['driver', 'store'],
  ['namespace', 'prefix'],
])

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
  if (/^\s*\d+(?:\.\d+)?\s*$/.test(value)) return converted(Number(value), unitMs)
  const written = spokenDuration(value)
  return written === undefined ? undefined : `'${written}'`
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
const OBSERVE =
  "to watch decisions without answering, subscribe to the `limiter:decision` diagnostics channel (core's Events)"
const PEER_NOTES: ReadonlyMap<string, string> = new Map([
  // express-rate-limit
  [
    'handler',
    "express-rate-limit's and hono-rate-limiter's `handler` is `onLimited` here, called with the Decision where they pass their options (`options.statusCode` and `options.message` do not exist: the status and headers are already set; send the body, or use `statusCode` and `message`)",
  ],
  [
    'onLimitReached',
    `express-rate-limit 6's \`onLimitReached\` is a notification; \`onLimited\` answers the refused request: ${OBSERVE}`,
  ],
  [
    'requestWasSuccessful',
    "express-rate-limit's `requestWasSuccessful` is the response status here: below 400 counts as a success for `skipSuccessfulRequests` / `skipFailedRequests`",
  ],
  [
    'validate',
    'there is no such option: options are checked as the limiter is built, and the first requests warn of likely mistakes (`warnings: false` silences those)',
  ],
  // koa-ratelimit
  [
    'throw',
    "koa-ratelimit's `throw`: the middleware answers the refusal itself; an `onLimited` that calls `ctx.throw(429)` goes through your error handling instead",
  ],
  ...(['remaining', 'reset', 'total'] as const).map(
    (name) =>
      [
        name,
        "koa-ratelimit's header names are fixed here: `headers: 'legacy'` sends X-RateLimit-Limit, -Remaining and -Reset; the IETF sets are `'draft-10'` (the default), `'draft-7'`, `'draft-6'`",
      ] as const,
  ),
  // rate-limiter-flexible
  ...(['inMemoryBlockOnConsumed', 'inMemoryBlockDuration'] as const).map(
    (name) =>
      [
        name,
        "rate-limiter-flexible's in-memory block is on by default here: a refused key is answered from memory, without a round trip, for up to `blockedCache.maxMs` (`blockedCache`)",
      ] as const,
  ),
  ...(['useRedisPackage', 'storeType'] as const).map(
    (name) =>
      [
        name,
        'there is no such option: `redis` takes an ioredis client (or Cluster) or a node-redis 4 to 6 client as it is',
      ] as const,
  ),
  // @nestjs/throttler
  [
    'throttlers',
    "@nestjs/throttler's throttlers are `limits: [{ name, limit, window }]` here, decided all or nothing",
  ],
  [
    'default',
    "@nestjs/throttler's `{ default: { limit, ttl } }` is `{ limit, window }` here; several named throttlers are `limits: [{ name, limit, window }]`",
  ],
  [
    'ignoreUserAgents',
    "there is no such option: `skip: (req) => /bot/i.test(req.headers['user-agent'] ?? '')`",
  ],
  [
    'generateKey',
    "@nestjs/throttler's `generateKey` is `key` here (the limiter's name, and a handler's route, are added to it)",
  ],
  // @fastify/rate-limit
  [
    'onExceeded',
    `@fastify/rate-limit's \`onExceeded\` is a notification; \`onLimited\` answers the refused request (one that sends nothing gets the default 429): ${OBSERVE}`,
  ],
  ['onExceeding', `there is no such option: ${OBSERVE}`],
  [
    'ban',
    "@fastify/rate-limit's `ban` (403 after so many refusals) is `limiter.block(key, duration)`, called where you decide a client has earned it (`onLimited`, say); `deny` refuses a list with 403",
  ],
  [
    'continueExceeding',
    "@fastify/rate-limit's `continueExceeding` makes each refused request extend the wait: call `limiter.penalize(key)` from `onLimited`, or `limiter.block(key, duration)`",
  ],
  [
    'exponentialBackoff',
    'there is no backoff option: `limiter.penalize(key, cost)` from `onLimited` makes each refusal cost more, `limiter.block(key, duration)` blocks for a time you choose',
  ],
  [
    'cache',
    "@fastify/rate-limit's `cache` bounds its in-memory keys: `store: new MemoryStore({ maxKeys })`",
  ],
  ['requestPropertyName', `there is no such option: ${WHERE_DECISION}`],
  ['requestStorePropertyName', `there is no such option: ${WHERE_DECISION}`],
  // Bottleneck and @upstash/ratelimit: one of their options is several here
  [
    'reservoir',
    "Bottleneck's `reservoir` is a rate here: `limit` per `window` (its refresh interval), with `maxDelay` to queue calls instead of refusing them",
  ],
  [
    'maxConcurrent',
    "Bottleneck's `maxConcurrent` is a concurrency policy here: `algorithm: 'concurrency'` with `limit`",
  ],
  [
    'minTime',
    "Bottleneck's `minTime` spaces calls: `limit: 1, window: <minTime>, burst: 1`, with `maxDelay` to queue them",
  ],
  [
    'limiter',
    "@upstash/ratelimit's `limiter` is three options here: `Ratelimit.slidingWindow(10, '10 s')` is `algorithm: 'sliding-window', limit: 10, window: '10s'`",
  ],
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
  return PEER_NAMES.get(name) ?? closestOption(name, known)
}

/** The name in `known` closest to `name` in spelling, if one is close enough to be a typo. */
function closestOption(name: string, known: Iterable<string>): string | undefined {
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
 * What other libraries' names mean in a scope of options other than the limiter's own (a store,
 * the shedder, a nested object such as `circuitBreaker`): for each name, the option meant (a
 * name of the scope) or, for one with no such option, what to do instead (a sentence).
 */
export type ScopeHints = ReadonlyMap<string, string>

/** A scope with no hints of its own: the closest spelling among its names, nothing else. */
export const NO_HINTS: ScopeHints = new Map()

// The hint for `name` in a scope with `hints` of its own: the limiter's peer names do not apply
// there (`points` is no store's option), the closest spelling among the scope's names does.
function scopedHint(name: string, known: ReadonlySet<string>, hints: ScopeHints): string {
  const hint = hints.get(name)
  if (hint !== undefined && !known.has(hint)) return ` (${hint})`
  const meant = hint ?? closestOption(name, known)
  return meant === undefined ? '' : ` (did you mean \`${meant}\`?)`
}

/**
 * Refuses an option name that is not in `known`, with a suggestion when one is likely (`at`
 * prefixes the name in the error, as in `limits[0].`). Only own properties count: `__proto__`, `constructor` and the like are unknown names like any other.
 * With `hints`, the options are a scope of their own (see {@link ScopeHints}).
 */
export function checkOptionNames(
  options: object,
  known: ReadonlySet<string>,
  at = '',
  hints?: ScopeHints,
): void {
  for (const name of Object.keys(options)) {
    if (known.has(name)) continue
    const value: unknown = (options as Record<string, unknown>)[name]
    const hint =
      hints === undefined ? optionHint(name, value, known) : scopedHint(name, known, hints)
    throw new LimiterRangeError(`${at}${name}`, value, `is not an option${hint}`)
  }
}

/**
 * `options` as an object of known names only: a `TypeError` naming `option` when it is not an
 * object (an array, `null`), a `RangeError` for an unknown name (see {@link checkOptionNames}).
 * For a nested object, such as `circuitBreaker` (`at` is then `circuitBreaker.`), or the options
 * of a store or a shedder; returns its own enumerable properties (see {@link ownOptions}).
 */
export function knownOptions<T extends object>(
  options: T,
  known: ReadonlySet<string>,
  at = '',
  hints?: ScopeHints,
): T {
  const own = ownOptions(options, at === '' ? 'options' : at.slice(0, -1))
  checkOptionNames(own, known, at, hints)
  return own
}

// What a store is told about a limiter's option, or about a peer store's key prefix.
const ON_THE_LIMITER =
  'is an option of the limiter (`createLimiter`) or the adapter, not of the store: set it there'
const PREFIX_ON_THE_LIMITER =
  "set `prefix` on the limiter (`createLimiter({ prefix, store })`) or the adapter's options instead: limiters with the same `prefix` and `name` share their counters on one store, so give each app its own"

/**
 * Names other libraries give their stores (rate-limit-redis, rate-limiter-flexible,
 * @fastify/rate-limit, koa-ratelimit) and limiter options given to a store, for the stores'
 * own hints: a key prefix is the limiter's `prefix` here, and a policy belongs to the limiter.
 */
export const STORE_HINTS: ScopeHints = new Map([
  ...['limit', 'window', 'algorithm', 'burst', 'name'].map(
    (name) => [name, `\`${name}\` ${ON_THE_LIMITER}`] as const,
  ),
  ...[...PEER_NAMES]
    .filter(([, ours]) => !ours.includes('.'))
    .map(
      ([peer, ours]) => [peer, `\`${peer}\` is \`${ours}\` here, which ${ON_THE_LIMITER}`] as const,
    ),
  ['prefix', `the store takes no prefix: ${PREFIX_ON_THE_LIMITER}`],
  ...(
    [
      ['keyPrefix', "rate-limiter-flexible's"],
      ['nameSpace', "@fastify/rate-limit's"],
      ['namespace', "koa-ratelimit's"],
    ] as const
  ).map(
    ([peer, whose]) =>
      [peer, `${whose} \`${peer}\` is the limiter's \`prefix\`: ${PREFIX_ON_THE_LIMITER}`] as const,
  ),
])

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
