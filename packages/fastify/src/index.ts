// @limiter/fastify: a Fastify 4/5 plugin (app-wide through fastify-plugin) over @limiter/core's HTTP glue.
import { type Decision, LimiterError } from '@limiter/core'
import {
  type RateLimitOptions as CoreOptions,
  probeOf,
  resolveRateLimitOptions,
  withDefaults,
} from '@limiter/core/http'
import type {
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
  preHandlerAsyncHookHandler,
} from 'fastify'
import fp from 'fastify-plugin'
import { limit } from './hooks.js'
import { type LimitHook, pluginSettings, routeScope } from './options.js'
import { addRouteHooks, configReader } from './routes.js'
import type { OnLimited, Resolved } from './types.js'

export {
  closeLimiters,
  type Decision,
  type HeaderStandard,
  type IpKeyOptions,
  ipKey,
  MemoryStore,
  RedisStore,
  routeKey,
  userKey,
} from '@limiter/core'
export type { LimitHook } from './options.js'

export type { OnLimited } from './types.js'

/** The shared options, typed with Fastify's request. */
export type RateLimitOptions = CoreOptions<FastifyRequest, OnLimited>

/** `app.rateLimit(options)`: any option, over the plugin's defaults. */
export type AppRateLimitOptions = Partial<RateLimitOptions>

/** A route's `config.rateLimit`: any option over the plugin's defaults, and its own `hook`. */
export type RouteRateLimitOptions = AppRateLimitOptions & {
  /** The request hook the limiter runs in (default: the plugin's, `'onRequest'`). */
  readonly hook?: LimitHook | undefined
}

// Fastify's own RegisterOptions declare `prefix?: string`: without `| undefined` here, register
// type-checks under exactOptionalPropertyTypes. (An fp-wrapped plugin gets no route prefix.)
type PluginShared<T> = Omit<T, 'prefix'> & { readonly prefix?: string }

/** Options for `app.register(rateLimit, options)`. */
export type RateLimitPluginOptions =
  | PluginShared<
      RateLimitOptions & {
        /** Limit every route that does not opt out (default true). */
        readonly global?: true | undefined
        readonly hook?: LimitHook | undefined
      }
    >
  | PluginShared<RouteRateLimitOptions & { readonly global: false }>

declare module 'fastify' {
  interface FastifyRequest {
    /** The decision of the last rate limiter this request passed through. */
    rateLimit?: Decision
  }
  interface FastifyContextConfig {
    /** This route's limiter, replacing the global one; `false` exempts the route. */
    rateLimit?: RouteRateLimitOptions | false
  }
  interface FastifyInstance {
    /** A preHandler hook that limits the routes it is added to (options over the plugin's). */
    rateLimit(options?: AppRateLimitOptions): preHandlerAsyncHookHandler
  }
}

type Hook = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>

const SPEC = {
  ip: (request: FastifyRequest) => request.ip,
  peer: (request: FastifyRequest) => request.socket.remoteAddress,
  headers: (request: FastifyRequest) => request.headers,
  trust: (request: FastifyRequest) => ({ framework: 'fastify' as const, app: request.server }),
}
const resolve = (options: RateLimitOptions): Resolved => resolveRateLimitOptions(options, SPEC)

// app.rateLimit() hooks learn their route per request: its scope is computed once per route.
const scopes = new WeakMap<object, string>()
function scopeOf(config: { readonly url?: string; readonly method?: string }): string {
  let scope = scopes.get(config)
  if (scope === undefined) {
    scope = config.url === undefined ? '' : routeScope(config.method ?? 'GET', config.url, config)
    scopes.set(config, scope)
  }
  return scope
}

// Async, so that an invalid option rejects `register` instead of escaping avvio as an exception.
const plugin: FastifyPluginAsync<RateLimitPluginOptions> = async (app, options) => {
  if (app.hasDecorator('rateLimit'))
    throw new LimiterError(
      'ERR_LIMITER_OPTION',
      "@limiter/fastify is registered already, in this app or a parent scope (Fastify's own error would be FST_ERR_DEC_ALREADY_PRESENT): register it once, at the root. To give a scope a limit of its own, add a named hook there, `scope.addHook('onRequest', scope.rateLimit({ limit, window, name: 'api' }))`, or give its routes `config.rateLimit`.",
    )
  const settings = pluginSettings<FastifyRequest, OnLimited>(options)
  // Invalid options throw here, so `register` (and `ready()`/`listen()`) fails naming the option.
  let globalRl: Resolved | undefined
  try {
    globalRl = settings.global ? resolve(settings.options as RateLimitOptions) : undefined
    if (globalRl === undefined) resolve(probeOf(settings.options))
  } catch (error) {
    await settings.ownStore?.close()
    throw error
  }

  app.decorateRequest('rateLimit', undefined)
  const configOf = configReader()
  app.decorate('rateLimit', (opts: AppRateLimitOptions = {}) => {
    const rl = resolve(withDefaults(settings.defaults, opts))
    const hook: Hook = (request, reply) =>
      new Promise((resolve, reject) =>
        limit(rl, scopeOf(configOf(request)), request, reply, (error, sent) => {
          if (error !== undefined) reject(error)
          else resolve(sent ? reply : undefined)
        }),
      )
    return hook as preHandlerAsyncHookHandler
  })

  addRouteHooks(app, settings, globalRl, resolve)

  if (settings.ownStore !== undefined) {
    const store = settings.ownStore
    app.addHook('onClose', () => store.close())
  }
}

/**
 * The rate-limiting plugin (wrapped with fastify-plugin, so it applies app-wide). Options are
 * validated at `register`: a bad one fails `register`, `ready()` and `listen()` with a
 * `TypeError`/`RangeError` naming it. Each route's limiter is built once, when the route is
 * declared: a route's `config.rateLimit` replaces the global limiter, `false` exempts it. A route
 * declared before the plugin loaded (`register` without `await`) is limited all the same, its
 * limiter built on its first request.
 * Errors from `key`, `cost`, `skip` or `message` go to Fastify's error handler.
 *
 * @example
 * await app.register(rateLimit, { limit: 100, window: '1m', redis })
 * app.get('/export', { config: { rateLimit: { limit: 2, window: '1m' } } }, handler)
 * app.get('/health', { config: { rateLimit: false } }, handler)
 * app.get('/x', { preHandler: app.rateLimit({ limit: 3, window: '10s' }) }, handler)
 */
export const rateLimit = fp(plugin, { fastify: '4.x || 5.x', name: '@limiter/fastify' })

export default rateLimit
