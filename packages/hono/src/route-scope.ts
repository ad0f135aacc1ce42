// The default route scope of a Hono limiter: the pattern of the route it runs in, from Hono's
// public `hono/route` helper.
import { LimiterError } from '@limiter/core'
import type { Context } from 'hono'
import { routePath } from 'hono/route'

// Hono keeps the matched routes under a symbol of its own module: a context made by another copy
// of Hono (its CommonJS build beside this ESM one, or a second version) has none under ours.
function twoCopies(cause: unknown): LimiterError {
  return new LimiterError(
    'ERR_LIMITER_UNSUPPORTED',
    "@limiter/hono could not read this request's matched route: the app was made by another " +
      'copy of Hono than the one @limiter/hono imports (its CommonJS build beside the ESM one, ' +
      'or two versions installed). Load Hono one way (all `import` or all `require`) and ' +
      'install one version, or give the limiter a `name`, which counts across routes and ' +
      'reads no route.',
    { cause },
  )
}

/**
 * The route scope of the limiter running now in `c`: the pattern it was registered with, with a
 * trailing catch-all dropped (`/api` for `app.use('/api/*', limiter)`, `''` for `app.use(limiter)`),
 * and never a method: Hono does not tell a middleware which other methods its route declares
 * (`app.on(['GET', 'POST'], ...)`), so a client changing its method must not find a fresh
 * budget. Limiters on `app.get('/x')` and `app.post('/x')` with equal options share counters
 * unless they are given names. Read before `next()`, which moves Hono's route index on.
 */
export function routeScope(c: Context): string {
  let pattern: string
  try {
    pattern = routePath(c)
  } catch (error) {
    throw twoCopies(error)
  }
  if (pattern === '*' || pattern === '/*') return ''
  return pattern.endsWith('/*') ? pattern.slice(0, -2) : pattern
}
