// The default route scope of a Koa limiter: read from what @koa/router leaves on the context.
import { routeKey } from '@limiter/core'
import { declaredMethods, declaredRouteKey } from '@limiter/core/http'

/** The part of an @koa/router `Layer` this module reads. */
interface LayerLike {
  readonly path?: unknown
  readonly methods?: unknown
  readonly stack?: unknown
}

// What @koa/router appends to a pattern-less `router.use()` layer so it matches everything under
// the router's prefix: `(?:\/|$)` or `{/*rest}` (13 and later), `([^/]*)` (12), `(.*)` (older).
const CATCH_ALL = /(?:\(\?:\\\/\|\$\)|\{\/\*rest\}|\(\[\^\/\]\*\)|\(\.\*\))$/

// The method part of each layer's scope, worked out once per methods list (again should it grow).
const parts = new WeakMap<readonly unknown[], { readonly length: number; readonly part: string }>()

function methodPart(methods: readonly unknown[]): string {
  let known = parts.get(methods)
  if (known?.length !== methods.length) {
    known = { length: methods.length, part: declaredMethods(methods.map(String)) }
    parts.set(methods, known)
  }
  return known.part
}

// Whether the layer `l` runs for a request with `method`: @koa/router lists in `ctx.matched` the
// layers whose path matched, whatever their methods (one limiter on `router.get('/x')` and
// `router.post('/x')` is in two of them).
const runsFor = (l: LayerLike, method: string): boolean =>
  !Array.isArray(l.methods) || l.methods.length === 0 || l.methods.includes(method)

/**
 * The route scope for the limiter `self` on this request. @koa/router sets `ctx._matchedRoute` to
 * each matched layer's pattern just before that layer's middleware runs, and lists the matched
 * layers in `ctx.matched`; the limiter finds the layer it runs in:
 * - in a route, the pattern and the methods the layer declares, never the raw URL nor the
 *   request's method: `GET /users/:id` for `router.get` (`HEAD` counts as `GET`), `GET,POST /x`
 *   for `router.register('/x', ['GET', 'POST'], ...)`, the bare pattern `/api` for
 *   `router.all('/api', ...)`: one budget for the route whatever method a client sends;
 * - in `router.use(limiter)` or `router.use('/admin', limiter)`: the router's prefix or the given
 *   path, without a method (`''` for a root router, like `app.use`);
 * - in no matched layer (`app.use(limiter)`, even after a router that called `next`): `''`.
 * A router that sets `_matchedRoute` without `matched` gets the request's method and pattern.
 */
export function routeScope(ctx: { readonly method: string }, self: unknown): string {
  const { _matchedRoute: route, matched } = ctx as {
    readonly _matchedRoute?: unknown
    readonly matched?: unknown
  }
  if (typeof route !== 'string' && !(route instanceof RegExp)) return ''
  const pattern = String(route)
  if (!Array.isArray(matched)) return routeKey(ctx.method, pattern)
  const mine = (matched as readonly LayerLike[]).filter(
    (l) => l.path === route && Array.isArray(l.stack) && l.stack.includes(self),
  )
  const method = ctx.method.toUpperCase()
  const layer = mine.find((l) => runsFor(l, method)) ?? mine[0]
  if (layer === undefined) return ''
  if (Array.isArray(layer.methods) && layer.methods.length > 0) {
    return declaredRouteKey(methodPart(layer.methods), pattern)
  }
  return pattern.replace(CATCH_ALL, '').replace(/\/$/, '')
}
