// withRateLimit: a route handler (`(request, ...rest) => Response`) wrapped in a Fetch limiter, for
// hosts that export handlers rather than serve them (Next.js App Router route handlers).
import { createFetchLimiter, type FetchLimiter, type FetchLimiterOptions } from './limiter.js'

/** A Fetch route handler: the `Request` (or a subclass: Next's `NextRequest`) and the rest. */
export type RouteHandler<R extends Request, A extends unknown[]> = (
  request: R,
  ...rest: A
) => Response | Promise<Response>

// A FetchLimiter already built, rather than options to build one from.
function isLimiter(value: FetchLimiterOptions | FetchLimiter): value is FetchLimiter {
  return typeof (value as Partial<FetchLimiter>).handle === 'function'
}

/**
 * `handler` behind a rate limit: refused requests get the 429 (or 403, 503) and never reach it;
 * its responses get the rate-limit headers. `limiter` is a {@link FetchLimiter} (share one across
 * `GET` and `POST` for one budget) or the options of one, built here once.
 *
 * The client address: with neither `ip` nor `trustProxy` among the options, `trustProxy` is `1`,
 * the right-most `X-Forwarded-For` entry. Next.js's server (`next start`) sets that header to the
 * socket's address when the request has none, and a proxy of yours in front appends the address
 * it saw, so that entry is the client's. Exposed without a proxy, a client can send its own
 * `X-Forwarded-For` and Next keeps it: put a proxy in front, or pass `ip` or `key`.
 *
 * @example
 * export const GET = withRateLimit(async () => Response.json({ ok: true }), {
 *   limit: 10,
 *   window: '1m',
 * })
 */
export function withRateLimit<R extends Request, A extends unknown[]>(
  handler: RouteHandler<R, A>,
  limiter: FetchLimiterOptions | FetchLimiter,
): (request: R, ...rest: A) => Promise<Response> {
  const limit = isLimiter(limiter) ? limiter : createFetchLimiter(routeDefaults(limiter))
  return (request, ...rest) => limit.handle(request, async () => handler(request, ...rest))
}

// `trustProxy: 1` unless the options say where the address comes from.
function routeDefaults(options: FetchLimiterOptions): FetchLimiterOptions {
  if (options === null || typeof options !== 'object') return options
  if (options.ip !== undefined || options.trustProxy !== undefined) return options
  return { ...options, trustProxy: 1 }
}
