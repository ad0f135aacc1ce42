// The default route scope of an Express limiter: read per request from what Express leaves on it.
import { declaredMethods, declaredRouteKey } from '@limiter/core/http'
import type { Request } from 'express'

/** The part of an Express 4 or 5 route (`req.route`) the route scope reads. */
interface RouteLike {
  readonly path?: unknown
  /** One layer per handler and method: `{ handle, method }`, no `method` for `route.all()`. */
  readonly stack?: unknown
}

interface RouteLayerLike {
  readonly handle?: unknown
  readonly method?: unknown
}

// The method part for `self` in `route` (see declaredMethods; `''` for `route.all()`), or
// undefined when `self` is not one of the route's handlers.
function methodPart(route: RouteLike, self: unknown): string | undefined {
  const stack = Array.isArray(route.stack) ? (route.stack as readonly RouteLayerLike[]) : []
  const own = stack.filter((layer) => layer?.handle === self)
  if (own.length === 0) return undefined
  return own.every((l) => typeof l.method === 'string')
    ? declaredMethods(own.map((l) => String(l.method)))
    : ''
}

/**
 * The route scope of the limiter `self`, read per request as `(req, self)`:
 * - in a route (`app.post('/login', limiter, h)`): the route pattern under its mount path and
 *   the methods the route runs the limiter for, never the request's (see `declaredMethods`):
 *   `POST /login`, `GET,POST /x`, `/api` for `app.all('/api', ...)`;
 * - anywhere else (`app.use`, `router.use`, a limiter wrapped in a function of its own): its
 *   mount path (`''` at the root), its parameters and wildcard as written, not as matched. Express leaves `req.route` set after a route calls `next()`,
 *   so a later `app.use` limiter must not take that route's pattern, or a client could pick
 *   among pass-through routes for fresh budgets.
 * The method part is worked out once per route (again should the route gain handlers).
 */
// `base` (a mount path as matched) with each of `params`' values put back as its parameter:
// `/users/42` with { id: '42' } is `/users/:id`, Express 4's `/api/*` matched as `/api/x/y` with
// { 0: 'x/y' } is `/api/*`, Express 5's `/api/*splat` with { splat: ['x', 'y'] } is `/api/:splat`.
// A value takes whole segments, the right-most it equals (parameters follow the literal part of
// a mount path), wildcards (several segments) first; one that fills part of a segment (`/api*`),
// that segment's end. Values are decoded, so the path is too (encoding opens no budgets).
function unfilled(base: string, params: Readonly<Record<string, unknown>>): string {
  let path = base
  try {
    path = decodeURIComponent(base)
  } catch {
    // Express answers 400 to a path it cannot decode before any middleware runs
  }
  const segments: (string | null)[] = path.split('/')
  const taken = segments.map(() => false)
  const values = Object.entries(params)
    .map(([name, value]) => {
      const text = Array.isArray(value) ? value.join('/') : String(value)
      return { mark: /^\d+$/.test(name) ? '*' : `:${name}`, parts: text.split('/') }
    })
    .filter(({ parts }) => parts.join('') !== '')
    .sort((a, b) => b.parts.length - a.parts.length)
  for (const { mark, parts } of values) putBack(segments, taken, parts, mark)
  return segments.filter((segment) => segment !== null).join('/')
}

// Puts `mark` where `parts` fill the right-most untaken run of segments (or end one segment).
function putBack(segments: (string | null)[], taken: boolean[], parts: string[], mark: string) {
  for (let at = segments.length - parts.length; at >= 1; at--) {
    if (!parts.every((part, i) => !taken[at + i] && segments[at + i] === part)) continue
    segments[at] = mark
    taken[at] = true
    for (let i = 1; i < parts.length; i++) {
      segments[at + i] = null
      taken[at + i] = true
    }
    return
  }
  if (parts.length !== 1) return
  const part = parts[0] as string
  for (let at = segments.length - 1; at >= 1; at--) {
    const segment = segments[at]
    if (taken[at] || segment == null || !segment.endsWith(part)) continue
    segments[at] = `${segment.slice(0, segment.length - part.length)}${mark}`
    taken[at] = true
    return
  }
}

export function routeScopes(): (req: Request, self: unknown) => string {
  const parts = new WeakMap<
    object,
    { readonly layers: number; readonly part: string | undefined }
  >()
  return (req, self) => {
    const route = req.route as RouteLike | undefined
    // baseUrl is the matched text, not the pattern: Express matches it case-insensitively by
    // default, so '/API' must not open fresh counters next to '/api'.
    if (route?.path === undefined) {
      // mounted with parameters or a wildcard (`app.use('/api/*', limiter)`): the pattern, not
      // each value, or a client would pick a fresh budget per URL
      const params = req.params as Readonly<Record<string, unknown>> | undefined
      for (const _ in params) return unfilled(req.baseUrl, params as never).toLowerCase()
      return req.baseUrl.toLowerCase()
    }
    const base = req.baseUrl.toLowerCase()
    const layers = Array.isArray(route.stack) ? route.stack.length : 0
    let entry = parts.get(route)
    if (entry?.layers !== layers) {
      entry = { layers, part: methodPart(route, self) }
      parts.set(route, entry)
    }
    if (entry.part === undefined) return base
    return declaredRouteKey(entry.part, `${base}${String(route.path)}`)
  }
}
