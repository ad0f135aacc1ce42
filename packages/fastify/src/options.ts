// The plugin's own options (`global`, `hook`), per-route settings, and route scopes.
import { LimiterRangeError, LimiterTypeError, MemoryStore } from '@limiter/core'
import {
  declaredRouteKey,
  optionsObject as objectOf,
  type PartialOptions,
  type RateLimitOptions,
  withDefaults,
} from '@limiter/core/http'

/** The request hook a limiter from `register` or `config.rateLimit` runs in. */
export type LimitHook = 'onRequest' | 'preValidation' | 'preHandler'

const HOOKS: readonly unknown[] = ['onRequest', 'preValidation', 'preHandler']

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
export function routeScope(
  method: string | readonly string[],
  url: string,
  config?: unknown,
): string {
  const declared = (config as Partial<Record<symbol, string | readonly string[]>> | undefined)?.[
    DECLARED
  ]
  const methods = declared ?? method
  return declaredRouteKey(typeof methods === 'string' ? [methods] : methods, url)
}

/**
 * Where `onRoute` keeps the methods a route was declared with, on its config: the HEAD twin of a
 * GET route has `'HEAD'` as its own method, and its config says `GET,POST` for a twin of
 * `GET,POST /x`, so it counts as `GET,POST /x`, not as `GET /x` (a budget of its own).
 */
export const DECLARED: unique symbol = Symbol.for('@limiter/fastify declared methods') as never

/** Marks `config` (a route's own copy, in `onRoute`) with its declared methods. */
export function markDeclared(config: Record<PropertyKey, unknown>, method: unknown): void {
  config[DECLARED] = method
}
