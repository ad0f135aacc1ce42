// createFetchLimiter: the Fetch kit for any host that hands over a `Request` (srvx, Bun, Deno,
// Workers, Next.js route handlers), with the host's extras per request.

import type { Decision } from '../decision/decision.js'
import { optionsObject } from '../http/defaults.js'
import { type FetchRateLimitOptions, fetchKit } from './kit.js'
import type { WaitUntil } from './lifecycle.js'

/** What the host knows of a request besides the `Request` itself. */
export interface FetchExtras {
  /** The client address (Bun `server.requestIP(req)?.address`, Deno `info.remoteAddr.hostname`). */
  readonly ip?: string | undefined
  /** The runtime's `waitUntil` (Workers `ctx.waitUntil`), for releases after the response. */
  readonly waitUntil?: WaitUntil | undefined
  /**
   * Called with the decision of a counted request before `next` runs (not for a skipped or
   * denied one): for a handler that reports it, e.g. the quota left.
   */
  readonly decided?: ((decision: Decision) => void) | undefined
}

/** Options of {@link createFetchLimiter}: callbacks see the `Request`; `ip` sees the extras too. */
export type FetchLimiterOptions = Omit<FetchRateLimitOptions<Request>, 'ip'> & {
  /**
   * The client address of a request, when the host does not pass it as `extras.ip` (srvx:
   * `(request) => request.ip`). Default: `extras.ip`.
   */
  readonly ip?: ((request: Request, extras: FetchExtras) => string | null | undefined) | undefined
}

/** A limiter for Fetch handlers: see {@link createFetchLimiter}. */
export interface FetchLimiter {
  /**
   * Refuses `request` (429 with `Retry-After` and a problem document, 403 from `deny`, 503 when
   * the store is down under `failureMode: 'closed'`), or runs `next` and returns its response
   * with the rate-limit headers (a copy when its headers are immutable). A concurrency lease ends
   * when the response body ends or is cancelled, or the request's signal aborts (not before its
   * handler is over, unless `releaseOnDisconnect`).
   */
  handle(request: Request, next: () => Promise<Response>, extras?: FetchExtras): Promise<Response>
}

const NO_EXTRAS: FetchExtras = Object.freeze({})

/**
 * A rate limiter for any Fetch-API server: `handle(request, next, extras)` around the handler.
 * Options are the adapters' (`limit`, `window`, `limits`, `key`, `maxDelay`, ...), validated
 * here; the client address comes from `extras.ip` or the `ip` option, never from forwarded
 * headers unless `trustProxy` says so. A request with no address and no `key` option fails with
 * a `LimiterError` (`ERR_LIMITER_KEY`) saying what to pass.
 *
 * @example
 * const limit = createFetchLimiter({ limit: 100, window: '1m', redis })
 * Bun.serve({ fetch: (req, server) =>
 *   limit.handle(req, () => app(req), { ip: server.requestIP(req)?.address }) })
 */
export function createFetchLimiter(options: FetchLimiterOptions): FetchLimiter {
  // checked before it is spread: an array would become options named `0`, `1`...
  if (options !== undefined) optionsObject('options', options)
  // the extras of the requests being checked, for the `ip` resolver (called during the check)
  const extrasOf = new WeakMap<Request, FetchExtras>()
  const given = options?.ip
  const resolve =
    typeof given === 'function'
      ? (request: Request) => given(request, extrasOf.get(request) ?? NO_EXTRAS)
      : given
  const kit = fetchKit<Request>({ ...options, ip: resolve } as FetchRateLimitOptions<Request>, {
    request: (request) => request,
    ip: (request) => extrasOf.get(request)?.ip,
    ipHint:
      'Pass the address as `handle(request, next, { ip })` (Bun: `server.requestIP(request)?.address`; Deno: `info.remoteAddr.hostname`), or an `ip` option (srvx: `(request) => request.ip`).',
  })
  return {
    handle(request, next, extras = NO_EXTRAS) {
      extrasOf.set(request, extras)
      return kit.handle(request, next, { waitUntil: extras.waitUntil, decided: extras.decided })
    },
  }
}
