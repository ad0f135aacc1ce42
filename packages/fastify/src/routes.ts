// Which limiter each route runs: attached when the route is declared (onRoute), or, for a route
// declared before the plugin loaded (`app.register(rateLimit)` without `await`), found by a
// root-level hook on the route's first request.
import type { RateLimitOptions } from '@limiter/core/http'
import type { FastifyInstance, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify'
import { type CallbackHook, callbackHook } from './hooks.js'
import {
  type LimitHook,
  markDeclared,
  type PluginSettings,
  routeScope,
  routeSettings,
} from './options.js'
import type { OnLimited, Resolved } from './types.js'

type Resolve = (options: RateLimitOptions<FastifyRequest, OnLimited>) => Resolved

/** A route's config as the request sees it (Fastify adds `url` and `method`). */
type RouteConfig = { readonly rateLimit?: unknown; readonly url?: string; readonly method?: string }

/**
 * The route's config for a request, cheaply. `request.routeOptions.config` is the public way, but
 * it builds an object per call on Fastify 4 (which every request would pay in the root hook;
 * BENCHMARKS.md has the cost), and `request.routeConfig` is deprecated. Both majors keep the route context under a
 * symbol described `fastify.context`, whose `config` is what `routeOptions.config` returns: read
 * it there when present, else the public way.
 */
export function configReader(): (request: FastifyRequest) => RouteConfig {
  let context: symbol | null | undefined
  return (request) => {
    if (context === undefined)
      context =
        Object.getOwnPropertySymbols(request).find((s) => s.description === 'fastify.context') ??
        null
    const config =
      context === null
        ? undefined
        : (request as unknown as Record<symbol, { config?: RouteConfig } | undefined>)[context]
            ?.config
    return config ?? (request.routeOptions.config as RouteConfig)
  }
}

function routeError(error: unknown, scope: string, late: boolean): unknown {
  if (error instanceof Error) {
    error.message += ` (config.rateLimit of route ${scope}${late ? '; the route was declared before @limiter/fastify loaded: `await app.register(rateLimit, ...)` before declaring routes' : ''})`
  }
  return error
}

/**
 * The limiter of a route with `config` (`rateLimit`: `false`, undefined or options), as a hook
 * in phase `hook`, or undefined when the route is not limited. Throws a bad `config.rateLimit`,
 * naming the route.
 */
function routeHook(
  settings: PluginSettings<FastifyRequest, OnLimited>,
  globalRl: Resolved | undefined,
  resolve: Resolve,
  route: {
    readonly config?: unknown
    readonly method: string | readonly string[]
    readonly url: string
  },
  late: boolean,
): { readonly hook: LimitHook; readonly run: CallbackHook } | undefined {
  const own = (route.config as RouteConfig | undefined)?.rateLimit
  if (own === false) return undefined
  if (own === undefined)
    return globalRl === undefined
      ? undefined
      : { hook: settings.hook, run: callbackHook(globalRl, '', settings.hook) }
  const scope = routeScope(route.method, route.url, route.config)
  try {
    const { hook, options } = routeSettings<FastifyRequest, OnLimited>(settings, own)
    return { hook, run: callbackHook(resolve(options), scope, hook) }
  } catch (error) {
    throw routeError(error, scope, late)
  }
}

/**
 * Marks each route's config (a copy of its own) as seen by this plugin instance (`seen`), and
 * with the methods it was declared for (see `markDeclared`). A HEAD twin gets its GET route's
 * methods from the GET routes' kept by URL (one entry per route, declared once).
 */
function routeMarker(seen: symbol): (route: RouteOptions) => void {
  const gets = new Map<string, unknown>()
  return (route) => {
    // a copy: one config object may serve several routes (of other methods), each marked apart
    const config = { ...(route.config as object | undefined) } as Record<PropertyKey, unknown>
    config[seen] = true
    const { method, url } = route
    if (method === 'HEAD') markDeclared(config, gets.get(url) ?? method)
    else {
      if (method === 'GET' || (Array.isArray(method) && method.includes('GET')))
        gets.set(url, method)
      markDeclared(config, method)
    }
    ;(route as { config: unknown }).config = config
  }
}

/**
 * Adds the plugin's route hooks to `app`: `onRoute` attaches each route's limiter as it is
 * declared (validating `config.rateLimit` there), and marks the route; a root-level hook in the
 * plugin's phase limits the routes declared before the plugin loaded, which `onRoute` never saw,
 * so no route slips through unlimited whatever the order of `register` and the route.
 */
export function addRouteHooks(
  app: FastifyInstance,
  settings: PluginSettings<FastifyRequest, OnLimited>,
  globalRl: Resolved | undefined,
  resolve: Resolve,
): void {
  // Per plugin instance: another instance's routes are not this one's.
  const seen = Symbol('@limiter/fastify route seen')

  const marked = routeMarker(seen)
  app.addHook('onRoute', (route: RouteOptions) => {
    marked(route)
    const found = routeHook(settings, globalRl, resolve, route, false)
    if (found === undefined) return
    // A new array: Fastify copies the caller's options for the HEAD twin of a GET route.
    const hooks = route as unknown as Record<LimitHook, unknown>
    const existing = hooks[found.hook]
    hooks[found.hook] = existing === undefined ? [found.run] : [existing, found.run].flat()
  })

  const configOf = configReader()
  const late = new WeakMap<object, CallbackHook | null>()
  const lateHook: onRequestHookHandler = (request, reply, done) => {
    const config = configOf(request)
    // Routes onRoute saw run their own hook; a 404 (no route) is not limited, as before.
    if ((config as Record<PropertyKey, unknown>)[seen] === true || config.url === undefined) {
      done()
      return
    }
    let run = late.get(config)
    if (run === undefined) {
      run = lateRoute(config)
      late.set(config, run)
    }
    if (run === null) done()
    else run(request, reply, done)
  }
  // A late route's limiter, built on its first request; its errors go to every request of it.
  const lateRoute = (config: RouteConfig): CallbackHook | null => {
    const method = config.method ?? 'GET'
    const url = config.url ?? ''
    try {
      const found = routeHook(settings, globalRl, resolve, { config, method, url }, true)
      if (found === undefined) return null
      if (found.hook !== settings.hook)
        throw routeError(
          new Error(
            `its \`hook: '${found.hook}'\` cannot run from the plugin's '${settings.hook}' hook`,
          ),
          routeScope(method, url, config),
          true,
        )
      return found.run
    } catch (error) {
      return (_request, _reply, done) => done(error as Error)
    }
  }
  app.addHook(settings.hook as 'onRequest', lateHook)
}
