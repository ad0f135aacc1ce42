// The plugin's own options (`global`, `hook`), per-route defaults, and route scopes.
import { LimiterRangeError, LimiterTypeError, MemoryStore } from '@limiter/core'
import { declaredRouteKey, type RateLimitOptions } from '@limiter/core/http'

/** The request hook a limiter from `register` or `config.rateLimit` runs in. */
export type LimitHook = 'onRequest' | 'preValidation' | 'preHandler'

const HOOKS: readonly unknown[] = ['onRequest', 'preValidation', 'preHandler']

/** Shared options that may be missing: a route's own, or the plugin's defaults for routes. */
export type PartialOptions<Req, OnLimited> = Partial<RateLimitOptions<Req, OnLimited>>

/** The plugin's options split into what it reads itself and the shared options. */
export interface PluginSettings<Req, OnLimited> {
  readonly global: boolean
  readonly hook: LimitHook
  /** The options of the global limiter, `name` included. */
  readonly options: PartialOptions<Req, OnLimited>
  /** Defaults for per-route limiters: the options without `name`. */
  readonly defaults: PartialOptions<Req, OnLimited>
  /** The MemoryStore the plugin made when given neither `store` nor `redis`; closed with the app. */
  readonly ownStore: MemoryStore | undefined
}

function objectOf(option: string, value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new LimiterTypeError(option, value, 'an object')
  return value as Record<string, unknown>
}

/** Validates the `hook` option (default `'onRequest'`). */
export function hookOf(value: unknown, fallback: LimitHook = 'onRequest'): LimitHook {
  if (value === undefined) return fallback
  if (!HOOKS.includes(value))
    throw new LimiterRangeError(
      'hook',
      value,
      "must be 'onRequest', 'preValidation' or 'preHandler'",
    )
  return value as LimitHook
}

/**
 * Splits the plugin's options. When neither `store` nor `redis` is given, every limiter of the
 * plugin shares one MemoryStore (namespaces keep their counters apart; a route's HEAD twin shares
 * its GET counter).
 */
export function pluginSettings<Req, OnLimited>(value: unknown): PluginSettings<Req, OnLimited> {
  const { global = true, hook, ...shared } = objectOf('options', value)
  if (typeof global !== 'boolean') throw new LimiterTypeError('global', global, 'true or false')
  const limitHook = hookOf(hook)
  const ownStore =
    shared.store === undefined && shared.redis === undefined ? new MemoryStore() : undefined
  const options = (
    ownStore === undefined ? shared : { ...shared, store: ownStore }
  ) as PartialOptions<Req, OnLimited>
  const { name: _name, ...defaults } = options
  return { global, hook: limitHook, options, defaults, ownStore }
}

/**
 * With `global: false` the plugin's options are only defaults. A stand-in policy fills the gaps
 * so that every option given is still checked at `register`: without an `algorithm`, one that
 * takes the options given, as the routes that use them must choose (`retryAfter` is a
 * concurrency policy's estimate; waiting needs a policy that can reserve a slot; both, a pair).
 */
export function probeOf<Req, OnLimited>(
  options: PartialOptions<Req, OnLimited>,
): RateLimitOptions<Req, OnLimited> {
  if (options.limits !== undefined) return options as RateLimitOptions<Req, OnLimited>
  const { limit, window = 1000, algorithm, burst, retryAfter, ...rest } = options
  const cost = typeof options.cost === 'number' ? options.cost : 1
  const after = typeof options.delayAfter === 'number' ? options.delayAfter : 1
  const policy = { limit: limit ?? burst ?? Math.max(cost, after), window, burst, retryAfter }
  const waits = options.maxDelay !== undefined || options.delayAfter !== undefined
  if (algorithm !== undefined || (retryAfter === undefined && !waits))
    return { ...rest, ...policy, algorithm } as RateLimitOptions<Req, OnLimited>
  if (retryAfter === undefined)
    return { ...rest, ...policy, algorithm: 'gcra' } as RateLimitOptions<Req, OnLimited>
  if (!waits)
    return { ...rest, ...policy, algorithm: 'concurrency' } as RateLimitOptions<Req, OnLimited>
  const { retryAfter: _estimate, burst: _burst, ...both } = policy
  return {
    ...rest,
    limits: [
      { ...both, algorithm: 'concurrency', retryAfter },
      { ...both, algorithm: 'gcra', burst },
    ],
  } as RateLimitOptions<Req, OnLimited>
}

const SHORTHAND = ['limit', 'window', 'algorithm', 'burst', 'retryAfter'] as const

/**
 * A route's options over the plugin's defaults. A route's `store` or `redis` replaces both of the
 * plugin's; `burst` only travels with the plugin's `limit` (a route with its own `limit` has its
 * own `burst`), `retryAfter` only to a route whose own `algorithm` is `'concurrency'` or none,
 * and `maxDelay` with `delayAfter` only to a route that sets neither; a route's `limits` replace the plugin's policy, and its own policy fields the plugin's
 * `limits`.
 */
export function withDefaults<Req, OnLimited>(
  defaults: PartialOptions<Req, OnLimited>,
  route: unknown,
): RateLimitOptions<Req, OnLimited> {
  const own = objectOf('rateLimit', route) as PartialOptions<Req, OnLimited>
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
  // the plugin's `retryAfter` (a concurrency policy's estimate) stays with concurrency policies
  if (own.algorithm !== undefined && own.algorithm !== 'concurrency')
    merged.retryAfter = own.retryAfter
  // A route's policies replace the defaults' as a whole: `limits` or the one-policy fields.
  if (own.limits !== undefined) for (const field of SHORTHAND) delete merged[field]
  else if (SHORTHAND.some((field) => own[field] !== undefined)) delete merged.limits
  return merged as unknown as RateLimitOptions<Req, OnLimited>
}

/** A route's `config.rateLimit`: its `hook` (default: the plugin's) and options over the defaults. */
export function routeSettings<Req, OnLimited>(
  settings: PluginSettings<Req, OnLimited>,
  config: unknown,
): { hook: LimitHook; options: RateLimitOptions<Req, OnLimited> } {
  const { hook, ...own } = objectOf('rateLimit', config)
  return { hook: hookOf(hook, settings.hook), options: withDefaults(settings.defaults, own) }
}

/**
 * The route scope: the route's declared method(s) and pattern, e.g. `GET /users/:id` (`HEAD` counts
 * as `GET`), `GET,POST /x`, or the bare pattern for an every-method route (see `declaredRouteKey`).
 */
export function routeScope(method: string | readonly string[], url: string): string {
  return declaredRouteKey(typeof method === 'string' ? [method] : method, url)
}
