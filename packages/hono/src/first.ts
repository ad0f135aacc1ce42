// Whether a limiter runs first for a request: then nothing before it can have set a header field
// on the context, and its refusal can go out without Hono's `Headers`.
import type { Context } from 'hono'
import { matchedRoutes } from 'hono/route'

/**
 * True when `self` is the handler Hono runs first for `c` (route index 0, registered as it is,
 * not wrapped) and no response was set: no middleware ran before it, so no `c.header()` field
 * waits for the response. Hono keeps such fields where no public API reads them without building
 * a `Headers`; a limiter that is not first (or wrapped by another function) answers through
 * `c.body()`, which carries them.
 */
export function runsFirst(c: Context, self: unknown): boolean {
  if (c.finalized || c.req.routeIndex !== 0) return false
  try {
    return matchedRoutes(c)[0]?.handler === self
  } catch {
    // a context from another copy of Hono: its routes are under another symbol
    return false
  }
}
