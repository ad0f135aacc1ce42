// Options over defaults: a route's (or a handler's) limiter built on app-wide defaults, and a
// stand-in policy that checks defaults which name none.
import { LimiterTypeError } from '../common/errors.js'
import type { RateLimitOptions } from './options.js'

/** Shared options that may be missing: a route's own, or app-wide defaults for routes. */
export type PartialOptions<Req, OnLimited = never> = Partial<RateLimitOptions<Req, OnLimited>>

/** `value` as an options object, or a `TypeError` naming `option`. */
export function optionsObject(option: string, value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new LimiterTypeError(option, value, 'an object')
  return value as Record<string, unknown>
}

const SHORTHAND = ['limit', 'window', 'algorithm', 'burst', 'retryAfter', 'reserve'] as const

/**
 * A route's options over app-wide defaults. A route's `store` or `redis` replaces both of the
 * defaults'; `burst` only travels with the defaults' `limit` (a route with its own `limit` has its
 * own `burst`), `retryAfter` only to a route whose own `algorithm` is `'concurrency'` or none,
 * and `maxDelay` with `delayAfter` only to a route that sets neither; a route's `limits` replace
 * the defaults' policy, and its own policy fields the defaults' `limits`. `option` names the
 * route's options in the error when they are not an object.
 *
 * @example
 * withDefaults({ window: '1m', redis }, { limit: 5 }) // { window: '1m', redis, limit: 5 }
 */
export function withDefaults<Req, OnLimited>(
  defaults: PartialOptions<Req, OnLimited>,
  route: unknown,
  option = 'rateLimit',
): RateLimitOptions<Req, OnLimited> {
  const own = optionsObject(option, route) as PartialOptions<Req, OnLimited>
  const merged: Record<string, unknown> = { ...defaults, ...own }
  if (own.store !== undefined || own.redis !== undefined) {
    merged.store = own.store
    merged.redis = own.redis
  }
  if (own.limit !== undefined) merged.burst = own.burst
  // waiting is one choice: a route that says anything about it (`maxDelay: 0`) takes neither
  if (own.maxDelay !== undefined || own.delayAfter !== undefined) {
    merged.maxDelay = own.maxDelay
    merged.delayAfter = own.delayAfter
  }
  // the defaults' `retryAfter` and `reserve` (a concurrency policy's) stay with concurrency policies
  if (own.algorithm !== undefined && own.algorithm !== 'concurrency') {
    merged.retryAfter = own.retryAfter
    merged.reserve = own.reserve
  }
  // A route's policies replace the defaults' as a whole: `limits` or the one-policy fields.
  if (own.limits !== undefined) for (const field of SHORTHAND) delete merged[field]
  else if (SHORTHAND.some((field) => own[field] !== undefined)) delete merged.limits
  return merged as unknown as RateLimitOptions<Req, OnLimited>
}

/**
 * Defaults that name no policy (only routes do) checked all the same: a stand-in policy fills
 * the gaps so that every option given is validated at start-up. Without an `algorithm`, one that
 * takes the options given, as the routes that use them must choose (`retryAfter` is a
 * concurrency policy's estimate; waiting needs a policy that can reserve a slot; both, a pair).
 */
export function probeOf<Req, OnLimited>(
  options: PartialOptions<Req, OnLimited>,
): RateLimitOptions<Req, OnLimited> {
  if (options.limits !== undefined) return options as RateLimitOptions<Req, OnLimited>
  const { limit, window = 1000, algorithm, burst, retryAfter, reserve, ...rest } = options
  const cost = typeof options.cost === 'number' ? options.cost : 1
  const after = typeof options.delayAfter === 'number' ? options.delayAfter : 1
  const policy = {
    limit: limit ?? burst ?? Math.max(cost, after),
    window,
    burst,
    retryAfter,
    reserve,
  }
  const waits = options.maxDelay !== undefined || options.delayAfter !== undefined
  const leases = retryAfter !== undefined || reserve !== undefined
  if (algorithm !== undefined || (!leases && !waits))
    return { ...rest, ...policy, algorithm } as RateLimitOptions<Req, OnLimited>
  if (!leases) return { ...rest, ...policy, algorithm: 'gcra' } as RateLimitOptions<Req, OnLimited>
  if (!waits)
    return { ...rest, ...policy, algorithm: 'concurrency' } as RateLimitOptions<Req, OnLimited>
  const { retryAfter: _estimate, reserve: _reserve, burst: _burst, ...both } = policy
  return {
    ...rest,
    limits: [
      { ...both, algorithm: 'concurrency', retryAfter, reserve },
      { ...both, algorithm: 'gcra', burst },
    ],
  } as RateLimitOptions<Req, OnLimited>
}
