// The default route scope of a Koa limiter: read from what @koa/router leaves on the context.
import { routeKey } from '@limiter/core'

/** The part of an @koa/router `Layer` this module reads. */
interface LayerLike {
  readonly path?: unknown
  readonly methods?: unknown
  readonly stack?: unknown
}

// What @koa/router appends to a pattern-less `router.use()` layer so it matches everything under
// the router's prefix: `(?:\/|$)` or `{/*rest}` (13 and later), `([^/]*)` (12), `(.*)` (older).
const CATCH_ALL = /(?:\(\?:\\\/\|\$\)|\{\/\*rest\}|\(\[\^\/\]\*\)|\(\.\*\))$/

/**
 * The route scope for the limiter `self` on this request. @koa/router sets `ctx._matchedRoute` to
 * each matched layer's pattern just before that layer's middleware runs, and lists the matched
 * layers in `ctx.matched`; the limiter finds the layer it runs in:
 * - in a route (`router.get('/users/:id', limiter, h)`): method and pattern, `GET /users/:id`
 *   (`HEAD` counts as `GET`), never the raw URL;
 * - in `router.use(limiter)` or `router.use('/admin', limiter)`: the router's prefix or the given
 *   path, without a method (`''` for a root router, like `app.use`);
 * - in no matched layer (`app.use(limiter)`, even after a router that called `next`): `''`.
 * A router that sets `_matchedRoute` without `matched` gets method and pattern.
 */
export function routeScope(ctx: { readonly method: string }, self: unknown): string {
  const { _matchedRoute: route, matched } = ctx as {
    readonly _matchedRoute?: unknown
    readonly matched?: unknown
  }
  if (typeof route !== 'string' && !(route instanceof RegExp)) return ''
  const pattern = String(route)
  if (!Array.isArray(matched)) return routeKey(ctx.method, pattern)
  const layer = (matched as readonly LayerLike[]).find(
    (l) => l.path === route && Array.isArray(l.stack) && l.stack.includes(self),
  )
  if (layer === undefined) return ''
  if (Array.isArray(layer.methods) && layer.methods.length > 0) return routeKey(ctx.method, pattern)
  return pattern.replace(CATCH_ALL, '').replace(/\/$/, '')
}
