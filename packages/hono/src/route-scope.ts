// The default route scope of a Hono limiter: the pattern of the route it runs in, from Hono's
// public `hono/route` helper.
import type { Context } from 'hono'
import { routePath } from 'hono/route'

/**
 * The route scope of the limiter running now in `c`: the pattern it was registered with, with a
 * trailing catch-all dropped (`/api` for `app.use('/api/*', limiter)`, `''` for `app.use(limiter)`),
 * and never a method: Hono does not tell a middleware which other methods its route declares
 * (`app.on(['GET', 'POST'], ...)`), so a client changing its method must not find a fresh
 * budget. Limiters on `app.get('/x')` and `app.post('/x')` with equal options share counters
 * unless they are given names. Read before `next()`, which moves Hono's route index on.
 */
export function routeScope(c: Context): string {
  const pattern = routePath(c)
  if (pattern === '*' || pattern === '/*') return ''
  return pattern.endsWith('/*') ? pattern.slice(0, -2) : pattern
}
