// Policy: an algorithm plus its numbers, validated once and frozen.
import { type Duration, parseDuration, warnBareMilliseconds } from '../common/duration.js'
import { LimiterRangeError, LimiterTypeError } from '../common/errors.js'
import { limitValueHint } from '../common/option-names.js'
import { PRIORITY_RANKS } from '../shed/priority.js'

/**
 * The algorithms: six rate algorithms, and `'concurrency'`, which caps the requests a key has in
 * flight at once (each admission holds a lease until `limiter.release`, or `window` at most).
 */
export type Algorithm =
  | 'fixed-window'
  | 'sliding-window'
  | 'sliding-log'
  | 'token-bucket'
  | 'leaky-bucket'
  | 'gcra'
  | 'concurrency'

/** Every algorithm name, in documentation order. */
export const ALGORITHMS: readonly Algorithm[] = Object.freeze([
  'fixed-window',
  'sliding-window',
  'sliding-log',
  'token-bucket',
  'leaky-bucket',
  'gcra',
  'concurrency',
])

/** The six rate algorithms (every algorithm but `'concurrency'`), in documentation order. */
export const RATE_ALGORITHMS: readonly Algorithm[] = Object.freeze(
  ALGORITHMS.filter((a) => a !== 'concurrency'),
)

/**
 * Algorithms whose capacity is `limit` (counting requests in windows, or in flight), so `burst`
 * must equal it.
 */
const COUNTING: ReadonlySet<Algorithm> = new Set([
  'fixed-window',
  'sliding-window',
  'sliding-log',
  'concurrency',
])

/** The algorithms that can reserve a later slot (`maxDelay`): GCRA and the buckets it decides. */
export const RESERVING: ReadonlySet<Algorithm> = new Set(['gcra', 'token-bucket', 'leaky-bucket'])

/** Short codes used in default key names (keeps Redis keys compact). */
export const ALGORITHM_CODE: Readonly<Record<Algorithm, string>> = Object.freeze({
  'fixed-window': 'fw',
  'sliding-window': 'sw',
  'sliding-log': 'sl',
  'token-bucket': 'tb',
  'leaky-bucket': 'lb',
  gcra: 'gc',
  concurrency: 'cc',
})

/**
 * The largest `limit x window` and `burst x window` (in ms) the algorithms accept. They work in
 * integer units of 1/window of a request, and this bound keeps every intermediate value an exact
 * integer in both JavaScript and Redis Lua doubles.
 */
export const MAX_UNITS = 2 ** 50

/** The largest `limit` of `sliding-log`, whose Redis log keeps costs in 32-bit fields. */
export const MAX_LOG_LIMIT = 2 ** 32 - 1

/** The largest `limit` of `concurrency`: every slot in use is a lease the store holds. */
export const MAX_CONCURRENCY_LIMIT = 100_000

/** The default Retry-After of a `concurrency` refusal: nobody can know when a slot frees. */
export const DEFAULT_CONCURRENCY_RETRY_MS = 1000

/** The six rate algorithms: every algorithm but `'concurrency'`. */
export type RateAlgorithm = Exclude<Algorithm, 'concurrency'>

/** The algorithms that can reserve a later slot (`maxDelay`, `delayAfter`). */
export type ReservingAlgorithm = 'gcra' | 'token-bucket' | 'leaky-bucket'

/**
 * The algorithm of a policy without `algorithm`: what the types allow then (no `retryAfter`;
 * `maxDelay` only if it reserves). Keep it the default {@link definePolicy} applies: changing
 * the default is this line and that one.
 */
export type DefaultAlgorithm = 'gcra'

/**
 * An option that is not one here, or not one for this algorithm, as a type: the only value it
 * takes is the sentence the compiler shows (`Type 'number' is not assignable to type
 * '"limiter: use `limit` instead of `max`"'`). The runtime refuses it with the same advice.
 */
export type NotAnOption<Advice extends string> = `limiter: ${Advice}`

/** What every policy takes, whatever its algorithm. */
export interface PolicyNumbers {
  /** Requests (cost units) per window: a positive integer. */
  readonly limit: number
  /** The window: integer ms or a duration string such as `'10s'`, `'15m'`, `'1h'`. */
  readonly window: Duration
  /**
   * The most that can pass at once (bucket algorithms and GCRA). Default `limit`. The counting
   * algorithms (`fixed-window`, `sliding-window`, `sliding-log`) and `concurrency` only accept
   * `burst === limit`.
   */
  readonly burst?: number | undefined
}

/** The options of a policy whose algorithm is `A` (one name, or several with the same options). */
export type PolicyOptionsOf<A extends Algorithm> = PolicyNumbers & {
  /**
   * The algorithm. Default `'gcra'` (with `burst` defaulting to `limit`): exact, O(1), and a
   * client that waits out each refusal's Retry-After gets the full `limit` per `window`.
   */
  readonly algorithm: A
  /**
   * `concurrency` only: the `Retry-After` of a refusal (default 1 s), an estimate: a slot frees
   * when a request in flight ends. Never later than the moment the oldest lease expires.
   */
  readonly retryAfter?:
    | ([A] extends ['concurrency']
        ? Duration
        : NotAnOption<"`retryAfter` is for 'concurrency' policies: a rate refusal's Retry-After is exact">)
    | undefined
  /**
   * `concurrency` only: the fleet reserve, a share of `limit` per priority class kept from every
   * class below it (see {@link ReserveShares}).
   */
  readonly reserve?:
    | ([A] extends ['concurrency']
        ? ReserveShares
        : NotAnOption<"`reserve` is for 'concurrency' policies: it keeps in-flight slots for higher priorities">)
    | undefined
}

/**
 * A concurrency policy's fleet reserve: for a named class, the share of `limit` (from 0 to
 * under 1) that the classes below it may not use. A request of a class is admitted while the
 * slots in use, all classes together, plus its cost are at most `limit` minus the shares of
 * every class above it (rounded up to whole slots): `{ critical: 0.2 }` keeps 20% for critical
 * requests (the rest stop at 80% in use); `{ critical: 0.2, high: 0.1 }` lets normal and low
 * fill 70%, high 80%, critical 100%. Numeric ranks past 3 are below `low`. Shares sum under 1.
 */
export type ReserveShares = Readonly<
  Partial<Record<'critical' | 'high' | 'normal' | 'low', number>>
>

/** `T` with `algorithm` left out: the options of a policy of the default algorithm. */
export type Defaulted<T> = Omit<T, 'algorithm'> & { readonly algorithm?: undefined }

/**
 * What a user writes to describe a policy: a union on `algorithm`, so an option the algorithm
 * does not take (`retryAfter` on a rate algorithm) is a compile error where `algorithm` is a
 * literal. A value typed `Algorithm` compiles as long as it has no such option.
 */
export type PolicyOptions =
  | PolicyOptionsOf<RateAlgorithm>
  | PolicyOptionsOf<'concurrency'>
  | Defaulted<PolicyOptionsOf<DefaultAlgorithm>>

/** One entry of a limiter's `limits`: a policy, and optionally its name. */
export type LimitSpec = PolicyOptions & {
  /**
   * The policy's name: in its counters' keys, in the draft-10 headers and in the problem body's
   * `violated-policies`. Default: derived from its numbers (`gc10/1sb20`). Distinct within a limiter.
   */
  readonly name?: string | undefined
}

/** A validated policy. Plain, frozen data. */
export interface Policy {
  readonly algorithm: Algorithm
  readonly limit: number
  readonly windowMs: number
  readonly burst: number
  /** `concurrency` only: the estimate a refusal's `retryAfterMs` is capped at. */
  readonly retryAfterMs?: number | undefined
  /** `concurrency` with `reserve` only: the shares, as given (validated, frozen). */
  readonly reserve?: ReserveShares | undefined
  /**
   * `concurrency` with `reserve` only: the most slots in use (all classes) that still admit a
   * request of rank `r`, at index `min(r, 4)` (see {@link ceilingOf}).
   */
  readonly ceilings?: readonly number[] | undefined
  /**
   * GCRA and the buckets, under a limiter's `maxDelay` or `delayAfter`: how many of a burst pass
   * at once (the rest wait their turn).
   */
  readonly delayAfter?: number | undefined
  /** Likewise: how long a request may wait for its reserved slot, in units of 1/`limit` ms. */
  readonly waitUnits?: number | undefined
}

/** A validated policy with its name. */
export interface NamedPolicy extends Policy {
  readonly name: string
}

/** Whether `cost` is a cost `policy` can take: an integer from `min` (1, or 0 for a peek) to `burst`. */
export function isCost(cost: unknown, min: 0 | 1, burst: number): cost is number {
  return typeof cost === 'number' && Number.isInteger(cost) && cost >= min && cost <= burst
}

function positiveInteger(option: string, value: unknown): number {
  if (typeof value !== 'number' || Number.isNaN(value))
    throw new LimiterTypeError(option, value, `a positive integer${limitValueHint(option, value)}`)
  if (!Number.isInteger(value) || value < 1)
    throw new LimiterRangeError(option, value, 'must be a positive integer')
  return value
}

/**
 * Validates policy options and returns a frozen {@link Policy}. Throws a `TypeError` or
 * `RangeError` naming the option and the bad value (`at` prefixes the option's name in errors,
 * as in `limits[1].window`).
 *
 * @example
 * definePolicy({ algorithm: 'gcra', limit: 10, window: '1s', burst: 20 })
 * // { algorithm: 'gcra', limit: 10, windowMs: 1000, burst: 20 }
 */
export function definePolicy(options: PolicyOptions, at = ''): Policy {
  if (options === null || typeof options !== 'object')
    throw new LimiterTypeError(at === '' ? 'options' : at.slice(0, -1), options, 'an object')
  const algorithm = options.algorithm ?? 'gcra'
  if (!ALGORITHMS.includes(algorithm)) {
    throw new LimiterRangeError(
      `${at}algorithm`,
      algorithm,
      `must be one of ${ALGORITHMS.map((a) => `'${a}'`).join(', ')}`,
    )
  }
  const limit = positiveInteger(`${at}limit`, options.limit)
  const windowMs = parseDuration(options.window, `${at}window`)
  warnBareMilliseconds(options.window, 'window')
  const burst = options.burst === undefined ? limit : positiveInteger(`${at}burst`, options.burst)
  if (COUNTING.has(algorithm) && burst !== limit) {
    const what = algorithm === 'concurrency' ? 'in flight' : 'per window'
    throw new LimiterRangeError(
      `${at}burst`,
      burst,
      `'${algorithm}' admits at most \`limit\` (${limit}) ${what}, so \`burst\` must be omitted or equal it; use 'token-bucket', 'leaky-bucket' or 'gcra' for a separate burst`,
    )
  }
  if (algorithm === 'concurrency') return concurrencyPolicy(options, at, limit, windowMs)
  if (options.reserve !== undefined)
    throw new LimiterRangeError(
      `${at}reserve`,
      options.reserve,
      `keeps in-flight slots for higher priorities and is for 'concurrency' policies only, not '${algorithm}'`,
    )
  if (options.retryAfter !== undefined)
    throw new LimiterRangeError(
      `${at}retryAfter`,
      options.retryAfter,
      `is the Retry-After estimate of a 'concurrency' policy; a '${algorithm}' refusal's Retry-After is exact: remove \`retryAfter\``,
    )
  if (algorithm === 'sliding-log' && limit > MAX_LOG_LIMIT) {
    throw new LimiterRangeError(
      `${at}limit`,
      limit,
      `'sliding-log' keeps a record per admission and takes a limit of at most 2^32 - 1 (4294967295); use 'sliding-window' for larger limits`,
    )
  }
  if (limit * windowMs > MAX_UNITS) {
    throw new LimiterRangeError(
      `${at}limit`,
      limit,
      `limit x window (ms) must be at most 2^50 (window is ${windowMs} ms)`,
    )
  }
  if (burst * windowMs > MAX_UNITS) {
    throw new LimiterRangeError(
      `${at}burst`,
      burst,
      `burst x window (ms) must be at most 2^50 (window is ${windowMs} ms)`,
    )
  }
  return Object.freeze({ algorithm, limit, windowMs, burst })
}

function concurrencyPolicy(
  options: PolicyOptions,
  at: string,
  limit: number,
  windowMs: number,
): Policy {
  if (limit > MAX_CONCURRENCY_LIMIT)
    throw new LimiterRangeError(
      `${at}limit`,
      limit,
      `'concurrency' holds a lease per request in flight and takes a limit of at most ${MAX_CONCURRENCY_LIMIT}`,
    )
  const retryAfterMs =
    options.retryAfter === undefined
      ? DEFAULT_CONCURRENCY_RETRY_MS
      : parseDuration(options.retryAfter, `${at}retryAfter`)
  warnBareMilliseconds(
    options.retryAfter,
    'retryAfter',
    '@fastify/under-pressure and the Retry-After header count seconds',
  )
  const base = { algorithm: 'concurrency', limit, windowMs, burst: limit, retryAfterMs } as const
  if (options.reserve === undefined) return Object.freeze(base)
  const reserve = reserveShares(options.reserve, `${at}reserve`)
  return Object.freeze({ ...base, reserve, ceilings: ceilingsOf(reserve, limit) })
}

const CLASSES = Object.keys(PRIORITY_RANKS) as (keyof typeof PRIORITY_RANKS)[]

// Validates `reserve`: an object of known class names to shares in [0, 1), summing under 1.
function reserveShares(value: unknown, option: string): ReserveShares {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new LimiterTypeError(
      option,
      value,
      'an object of shares by class, e.g. { critical: 0.2 }',
    )
  const out: Record<string, number> = {}
  let sum = 0
  for (const [name, share] of Object.entries(value)) {
    if (!(CLASSES as string[]).includes(name))
      throw new LimiterRangeError(
        `${option}.${name}`,
        share,
        `is not a priority class: use ${CLASSES.map((c) => `'${c}'`).join(', ')}`,
      )
    if (typeof share !== 'number' || !(share >= 0 && share < 1))
      throw new LimiterRangeError(`${option}.${name}`, share, 'must be a share from 0 to under 1')
    out[name] = share
    sum += share
  }
  if (!(sum < 1))
    throw new LimiterRangeError(option, value, `shares must sum to under 1 (they sum to ${sum})`)
  return Object.freeze(out)
}

// The ceiling of each rank 0..4: `limit` minus the shares of the classes above, in whole slots.
function ceilingsOf(reserve: ReserveShares, limit: number): readonly number[] {
  const out: number[] = []
  let shares = 0
  for (let rank = 0; rank <= CLASSES.length; rank++) {
    // rounded to 1e-9 first, so 0.1 + 0.2 of 10 is 3 slots, not 4
    const kept = Math.ceil(Math.round(limit * shares * 1e9) / 1e9)
    out.push(Math.max(0, limit - kept))
    const name = CLASSES[rank]
    if (name !== undefined) shares += reserve[name] ?? 0
  }
  return Object.freeze(out)
}

/**
 * The most slots in use, all classes together, that still admit a request of priority rank
 * `rank` (default 2, normal) under `policy`: `limit` without a reserve.
 */
export function ceilingOf(policy: Policy, rank: number = PRIORITY_RANKS.normal): number {
  const { ceilings } = policy
  return ceilings === undefined ? policy.limit : (ceilings[Math.min(rank, 4)] as number)
}

/**
 * The policy's capacity as the Redis scripts take it: `burst`, then what the algorithm needs
 * besides (a concurrency policy's Retry-After estimate; a reserving policy's `delayAfter` and
 * wait allowance), joined by `/`. Also part of the batch group: policies that differ in any of
 * it never share a script call.
 */
export function capacityArg(policy: Policy): string | number {
  if (policy.retryAfterMs !== undefined) return `${policy.burst}/${policy.retryAfterMs}`
  if (policy.waitUnits !== undefined)
    return `${policy.burst}/${policy.delayAfter}/${policy.waitUnits}`
  return policy.burst
}
