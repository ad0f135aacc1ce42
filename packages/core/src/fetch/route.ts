// withRateLimit: a route handler (`(request, ...rest) => Response`) wrapped in a Fetch limiter, for
// hosts that export handlers rather than serve them (Next.js App Router route handlers).

import { LimiterError } from '../common/errors.js'
import { optionsObject } from '../http/defaults.js'
import { TRUST_DEFAULTED } from './client-ip.js'
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
 * the right-most `X-Forwarded-For` entry, which is the client's when a proxy of yours stands in
 * front (Vercel, a load balancer): it appends the address it saw. Next.js's server (`next start`)
 * sets the header only when the request has none, so exposed without a proxy, a client can send
 * its own `X-Forwarded-For` and pick its key: put a proxy in front, or pass a `key`. Off Vercel
 * (no `VERCEL` environment variable), a limiter on this default says so once, on its first
 * request (a `LimiterWarning`, code `LIMITER_TRUST_PROXY_DEFAULT`): pass `trustProxy: 1` (the
 * number of proxies in front) to say a proxy is there, or `warnings: false`.
 *
 * Options with a shared store (`redis`, or `store`) need a `name` (or every `limits` entry named):
 * limiters on one store with the same name and numbers share their counters, as processes do, so
 * two route handlers with the same numbers would otherwise share one budget. Without a name this
 * throws a `LimiterError` (`ERR_LIMITER_OPTION`); a `MemoryStore` of the limiter's own needs none.
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
  if (!isLimiter(limiter)) checkNamed(optionsObject('options', limiter) as FetchLimiterOptions)
  const limit = isLimiter(limiter) ? limiter : createFetchLimiter(routeDefaults(limiter))
  return (request, ...rest) => limit.handle(request, async () => handler(request, ...rest))
}

// `trustProxy: 1` unless the options say where the address comes from, marked as chosen here.
function routeDefaults(options: FetchLimiterOptions): FetchLimiterOptions {
  if (options === null || typeof options !== 'object') return options
  if (options.ip !== undefined || options.trustProxy !== undefined) return options
  const defaults = { ...options, trustProxy: 1, [TRUST_DEFAULTED]: true }
  return defaults as FetchLimiterOptions
}

// Whether the options name their counters: a `name`, or a name on every fixed `limits` entry
// (the policies' names then place the counters; a function's are only known per request).
function named(options: FetchLimiterOptions): boolean {
  if (options.name !== undefined) return true
  const { limits } = options as { limits?: unknown }
  return (
    Array.isArray(limits) &&
    limits.every((spec) => (spec as { name?: unknown } | null)?.name !== undefined)
  )
}

// Options on a shared store must name the limiter: a default name comes from the numbers alone
// (`gc3/15m`), and this handler's route is unknown here, so two handlers with the same numbers
// (or a `proxy.ts` limiter and a route's) would count in one counter.
function checkNamed(options: FetchLimiterOptions): void {
  if (options === null || typeof options !== 'object') return
  const option = options.redis != null ? 'redis' : options.store != null ? 'store' : undefined
  if (option === undefined || named(options)) return
  const what =
    option === 'redis' ? 'a store shared between processes' : 'a store that may be shared'
  throw new LimiterError(
    'ERR_LIMITER_OPTION',
    `withRateLimit: with \`${option}\` (${what}) give the limiter a \`name\` (e.g. name: 'login'), or name every \`limits\` entry: limiters on one store with the same name and numbers share counters, so two route handlers would share one budget.`,
  )
}
