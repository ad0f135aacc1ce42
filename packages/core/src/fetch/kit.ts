// The Fetch kit: one request check around a handler that answers a Fetch `Response`, for every
// Web-standard host (Hono, srvx, Bun, Deno, Workers, Next.js route handlers).
import { LimiterTypeError } from '../common/errors.js'
import type { Decision } from '../decision/decision.js'
import { beginCheck, isThenable } from '../http/check.js'
import { limitedNow, limitedResponse } from '../http/handle.js'
import type { HeaderPair } from '../http/headers.js'
import {
  type Awaitable,
  type RateLimitOptions,
  type ResolvedRateLimit,
  resolveRateLimitOptions,
} from '../http/options.js'
import { giveBackReservation, owedOnce } from '../http/owed.js'
import type { ProxyTrust } from '../http/proxy-trust.js'
import type { CheckResult, LimitedResponse, RateLimitCheck } from '../http/types.js'
import type { RequestAddresses } from '../http/warnings.js'
import {
  checkTrustProxy,
  clientAddress,
  noAddress,
  TRUST_DEFAULTED,
  type TrustProxy,
} from './client-ip.js'
import {
  keepAlive,
  type Settle,
  settleOnAbort,
  settleWithBody,
  type WaitUntil,
  waitOut,
} from './lifecycle.js'
import {
  decorate,
  isResponse,
  type PrepareHeader,
  prepareHeaders,
  type Respond,
  refusal,
} from './response.js'

/** Full control of a limited response: return it; the rate-limit headers are added to it. */
export type FetchOnLimited<Req> = (req: Req, decision: Decision) => Awaitable<Response>

/** What a Fetch host adds to the shared options: where the client address comes from. */
export interface FetchAddressOptions<Req> {
  /**
   * The client address of a request (for the default key): `undefined` when it has none. A
   * Fetch host has no socket: each runtime gives it its own way (see the README's presets).
   */
  readonly ip?: ((req: Req) => string | null | undefined) | undefined
  /**
   * Believe `X-Forwarded-For`: `true` its left-most entry, a number the entry that many proxy
   * hops away (`1`: one proxy in front). Default `false`: only the resolver's address counts.
   */
  readonly trustProxy?: TrustProxy | undefined
}

/** Options of a Fetch host's limiter: the shared options, `onLimited` returning a `Response`. */
export type FetchRateLimitOptions<Req> = RateLimitOptions<Req, FetchOnLimited<Req>> &
  FetchAddressOptions<Req>

/** What a host tells {@link fetchKit}. */
export interface FetchHost<Req> {
  /** The Fetch `Request` of `req` (its headers and `signal`). */
  readonly request: (req: Req) => Request
  /**
   * The client address the host knows when no `ip` option is given; omit it when the host has
   * none, so that a limiter without `ip` or `key` fails at construction.
   */
  readonly ip?: ((req: Req) => string | null | undefined) | undefined
  /**
   * A request header field (lower-case `name`), when the host reads it more cheaply than the
   * `Request`'s `Headers` (Hono on Node: Node's own header object). Default: `headers.get`.
   */
  readonly header?: ((req: Req, name: string) => string | undefined) | undefined
  /** Says what to pass when no address was found (the error message's advice). */
  readonly ipHint: string
  /** Option names the host reads itself, besides the shared ones and `ip`, `trustProxy`. */
  readonly extraOptions?: readonly string[] | undefined
}

/**
 * How requests go through a {@link FetchKit}: per request (`createFetchLimiter`'s extras), or one
 * object per middleware whose callbacks read the request they are given (Hono: nothing to build
 * per request). Each callback gets the request (`req`) last.
 */
export interface FetchCall<Req = unknown> {
  /** The route scope (see `declaredRouteKey`), or how to read it; `''` (default) for none. */
  readonly scope?: string | ((req: Req) => string) | undefined
  /** The host's `waitUntil`, for what a request owes once its response is over. */
  readonly waitUntil?: ((promise: Promise<unknown>, req: Req) => void) | undefined
  /** Called with the decision of a counted request before its handler runs. */
  readonly decided?: ((decision: Decision, req: Req) => void) | undefined
  /**
   * Builds a refusal's response (429/403/503) the host's own way, e.g. Hono's `c.body()`, which
   * keeps headers earlier middleware set; default `new Response(body, init)`.
   */
  readonly respond?: Respond<Req> | undefined
  /**
   * Sets one rate-limit header field before the handler runs, where
   * the response the handler builds picks it up (Hono's `c.header()`). With it, a response that
   * carries the fields as set needs no `Headers` read or copy afterwards; one that does not (a
   * `Response` the handler made itself) is decorated as without it.
   */
  readonly prepare?: PrepareHeader<Req> | undefined
  /**
   * Where the handler's response is once `next` is over, for a `next` that does not resolve to
   * it (Hono's: the response is `c.res`). Default: what `next` resolved to.
   */
  readonly response?: ((req: Req) => Response) | undefined
  /**
   * Takes each answer instead of the promise `handle` returns (which then resolves to nothing
   * useful): `from` is `'handler'` for the handler's response (decorated), `'refusal'` for one
   * `respond` built, `'other'` for `onLimited`'s or a 499. Not called for a skipped request.
   */
  readonly answer?: ((req: Req, res: Response, from: AnswerFrom) => void) | undefined
  /**
   * Calls `gone(status)` once the host's own response is over, whatever became of the body the
   * kit handed on (@hono/node-server: the Node response's `close`, with its status if it
   * finished). A middleware further out that replaces the response (Hono's `onError` after a
   * throw) drops that body unread; this still ends what the request holds. Read only when
   * something is owed. Without it, the body's end alone does (and the lease's `window`).
   */
  readonly ended?: ((req: Req, gone: (status: number | undefined) => void) => void) | undefined
}

/** A {@link FetchCall} that reads the handler's response itself and takes every answer. */
export type AnsweringCall<Req> = FetchCall<Req> &
  Required<Pick<FetchCall<Req>, 'response' | 'answer'>>

/** Where an answer given to {@link FetchCall.answer} came from. */
export type AnswerFrom = 'handler' | 'refusal' | 'other'

/** A limiter wrapped around Fetch handlers. */
export interface FetchKit<Req> {
  /**
   * Checks `req`: answers a refusal (429, 403 from `deny`, 503 when the store is down and
   * `failureMode` is `'closed'`), or runs `next` and answers its response with the rate-limit
   * headers (a copy when its headers are immutable). A concurrency lease ends with the response
   * body, or when the request's `signal` aborts, though not before `next` is over (unless
   * `releaseOnDisconnect`); a `maxDelay` wait ends early when the `signal` aborts (its slot
   * refunded, the answer a bodiless 499). Rejects with the `LimiterError` of a failing callback,
   * or `next`'s.
   */
  handle(req: Req, next: () => Promise<Response>, call?: FetchCall<Req>): Promise<Response>
  /**
   * {@link FetchKit.handle} for middleware whose `next` resolves to something else (Hono's): the
   * call's `response` reads the handler's response once `next` is over, its `answer` takes every
   * answer (the promise resolves to nothing useful).
   */
  handle(req: Req, next: () => Promise<unknown>, call: AnsweringCall<Req>): Promise<unknown>
  /** The validated options (for hosts that need them). */
  readonly resolved: ResolvedRateLimit<Req, FetchOnLimited<Req>>
}

const NO_HEADERS: Readonly<Record<string, unknown>> = Object.freeze({})

// What the options' resolution reads of a request: the address (with `trustProxy` applied; a
// request without one fails with advice), for the warning about an ignored forwarding header the
// resolver's own address and the two header fields it looks at, and for the one about a
// trust-proxy setting a client can exploit, `trustProxy` (and whether withRateLimit chose it).
function addresses<Req>(
  options: FetchAddressOptions<Req>,
  host: FetchHost<Req>,
  trust: TrustProxy,
): RequestAddresses<Req> {
  const resolve = options.ip ?? host.ip
  const header =
    host.header ?? ((req: Req, name: string) => host.request(req).headers.get(name) ?? undefined)
  const peer = (req: Req): string | undefined => {
    const address = resolve?.(req)
    return address === null || address === '' ? undefined : address
  }
  const defaulted = (options as { [TRUST_DEFAULTED]?: unknown })[TRUST_DEFAULTED] === true
  const setting: ProxyTrust = { framework: 'fetch', trustProxy: trust, defaulted }
  return {
    trust: () => setting,
    ip: (req) => {
      // (some hosts build a request's Headers on first use: not read unless trusted)
      const address =
        trust === false || trust === 0
          ? peer(req)
          : clientAddress(peer(req), host.request(req).headers, trust)
      if (address === undefined || address === '') throw noAddress(host.ipHint)
      return address
    },
    peer,
    // read only when a forwarding field is there; without an address there is nothing to
    // compare, and the watch then never asks for `ip`
    headers: (req) => {
      const xff = header(req, 'x-forwarded-for')
      const forwarded = header(req, 'forwarded')
      if ((xff === undefined && forwarded === undefined) || peer(req) === undefined)
        return NO_HEADERS
      return { 'x-forwarded-for': xff, forwarded }
    },
  }
}

/**
 * The Fetch kit every Web-standard adapter stands on: validates the options (a bad one throws a
 * `TypeError`/`RangeError` naming it) and returns `handle(req, next, call)`. `Req` is what the
 * host's callbacks see (a `Request`, Hono's `Context`). Without `ip` and `key`, and with a host
 * that has no address of its own, it throws at construction.
 *
 * @example
 * const kit = fetchKit(options, { request: (c: Context) => c.req.raw, ip, ipHint })
 * app.use((c, next) => kit.handle(c, async () => { await next(); return c.res }))
 */
export function fetchKit<Req>(
  options: FetchRateLimitOptions<Req>,
  host: FetchHost<Req>,
): FetchKit<Req> {
  const { ip, trustProxy, ...shared } = (options ?? {}) as FetchRateLimitOptions<Req>
  if (ip !== undefined && typeof ip !== 'function')
    throw new LimiterTypeError('ip', ip, 'a function that returns the client address')
  const trust = checkTrustProxy(trustProxy)
  if (ip === undefined && host.ip === undefined && options?.key === undefined)
    throw new LimiterTypeError('ip', ip, `a client address resolver on this host (${host.ipHint})`)
  const rl = resolveRateLimitOptions(shared as RateLimitOptions<Req, FetchOnLimited<Req>>, {
    ...addresses(options, host, trust),
    extraOptions: host.extraOptions,
  })
  return {
    resolved: rl,
    handle: (req: Req, next: () => Promise<unknown>, call: FetchCall<Req> = {}) =>
      handle(rl, host, req, next, call) as Promise<Response>,
  }
}

// The check, then the rest in the same turn when it was synchronous (no promise to wait for).
function handle<Req>(
  rl: ResolvedRateLimit<Req, FetchOnLimited<Req>>,
  host: FetchHost<Req>,
  req: Req,
  next: () => Promise<unknown>,
  call: FetchCall<Req>,
): Promise<unknown> {
  try {
    const { scope = '' } = call
    const check = beginCheck(rl, req, typeof scope === 'string' ? scope : scope(req))
    if (isThenable(check))
      return Promise.resolve(check).then((c) => checked(rl, host, req, next, call, c))
    return checked(rl, host, req, next, call, check)
  } catch (error) {
    return Promise.reject(error)
  }
}

// An answer, handed to the call's `answer` when it takes them.
function out<Req>(call: FetchCall<Req>, req: Req, res: Response, from: AnswerFrom): Response {
  call.answer?.(req, res, from)
  return res
}

// A refusal built by the call's `respond`, or as a new `Response`.
function refused<Req>(
  call: FetchCall<Req>,
  req: Req,
  limited: LimitedResponse,
  pairs: readonly HeaderPair[],
  request?: object,
): Response {
  return out(call, req, refusal(limited, pairs, call.respond, req, request), 'refusal')
}

function checked<Req>(
  rl: ResolvedRateLimit<Req, FetchOnLimited<Req>>,
  host: FetchHost<Req>,
  req: Req,
  next: () => Promise<unknown>,
  call: FetchCall<Req>,
  check: CheckResult,
): Promise<unknown> {
  if (check === undefined) return next()
  if (check.denied) return Promise.resolve(refused(call, req, check.response, []))
  try {
    call.decided?.(check.decision, req)
  } catch (error) {
    // the request goes no further: what its admission took comes back
    if (check.decision.allowed) keepAlive(giveBackReservation(check), waitUntilOf(call, req))
    return Promise.reject(error)
  }
  const { decision } = check
  // a shadow limiter's refusal goes on: it was decided and counted, not enforced
  if (!decision.allowed && !check.shadow) return refuse(rl, host, req, check, call)
  if (decision.delayMs > 0 && !check.shadow) return waited(rl, host, req, next, call, check)
  return run(rl, host.request(req), req, next, call, check)
}

// A request whose reserved slot is `delayMs` away: it waits, unless its client leaves first.
async function waited<Req>(
  rl: ResolvedRateLimit<Req, FetchOnLimited<Req>>,
  host: FetchHost<Req>,
  req: Req,
  next: () => Promise<unknown>,
  call: FetchCall<Req>,
  check: RateLimitCheck,
): Promise<unknown> {
  const request = host.request(req)
  if (!(await waitOut(check.decision.delayMs, request.signal))) {
    // the client left while its request waited: it never ran, so its slot comes back
    keepAlive(giveBackReservation(check), waitUntilOf(call, req))
    return out(call, req, new Response(null, { status: 499 }), 'other')
  }
  return run(rl, request, req, next, call, check)
}

// The call's `waitUntil` for `req` (built only when something is given back).
function waitUntilOf<Req>(call: FetchCall<Req>, req: Req): WaitUntil | undefined {
  const { waitUntil } = call
  return waitUntil === undefined ? undefined : (promise) => waitUntil(promise, req)
}

// The handler's response once `next` is over: what it resolved to, or where the call reads it.
function responseOf<Req>(call: FetchCall<Req>, req: Req, value: unknown): Response {
  if (call.response !== undefined) return call.response(req)
  // a handler that returns no Response is a failed one (the host answers 500): it must not hold
  // what the request owes, nor fail further on with an error that does not name it
  if (!isResponse(value))
    throw new LimiterTypeError('handler', value, 'a Response (or a promise of one)')
  return value
}

// The handler, its response decorated. (The request's `signal` is read only when something is
// owed: a host may build it on first use, as @hono/node-server does with an AbortController.)
function run<Req>(
  rl: ResolvedRateLimit<Req, FetchOnLimited<Req>>,
  request: Request,
  req: Req,
  next: () => Promise<unknown>,
  call: FetchCall<Req>,
  check: RateLimitCheck,
): Promise<unknown> {
  const owed = owedOnce(rl, check)
  const prepared = prepareHeaders(call.prepare, request, req, check.headers)
  if (owed === undefined)
    return next().then((value) =>
      out(
        call,
        req,
        decorate(request, responseOf(call, req, value), check.headers, check, prepared),
        'handler',
      ),
    )
  const settle = (status: number | undefined): void =>
    keepAlive(owed(status), waitUntilOf(call, req))
  return admitted(rl, { check, prepared }, request, req, next, call, settle)
}

async function admitted<Req>(
  rl: ResolvedRateLimit<Req, FetchOnLimited<Req>>,
  { check, prepared }: { check: RateLimitCheck; prepared: boolean },
  request: Request,
  req: Req,
  next: () => Promise<unknown>,
  call: FetchCall<Req>,
  settle: Settle,
): Promise<Response> {
  // A client that leaves while its handler runs: by default what it holds (a lease) is held
  // until the handler is over, since in flight means running; with `releaseOnDisconnect`, at once.
  const handler = { running: true, left: false }
  const gone = (status: number | undefined): void => {
    if (handler.running && !rl.releaseOnDisconnect) handler.left = true
    else settle(status)
  }
  settleOnAbort(request.signal, gone)
  call.ended?.(req, gone)
  let decorated: Response
  try {
    const res = responseOf(call, req, await next())
    decorated = decorate(request, res, check.headers, check, prepared)
  } catch (error) {
    // the host answers a failed handler with 500
    settle(500)
    throw error
  } finally {
    handler.running = false
  }
  if (handler.left) {
    settle(undefined)
    return out(call, req, decorated, 'handler')
  }
  // a HEAD response's body is never sent: hosts drop it unread (Hono serves HEAD with the GET
  // route and keeps only the status and headers), so its end would never come
  if (request.method === 'HEAD') {
    settle(decorated.status)
    return out(call, req, decorated, 'handler')
  }
  return out(call, req, settleWithBody(decorated, settle), 'handler')
}

// A refusal: `onLimited`'s response, or ours (built in this turn unless a `message` callback
// must be awaited).
function refuse<Req>(
  rl: ResolvedRateLimit<Req, FetchOnLimited<Req>>,
  host: FetchHost<Req>,
  req: Req,
  check: RateLimitCheck,
  call: FetchCall<Req>,
): Promise<Response> {
  if (rl.onLimited !== undefined)
    return limitedBy(rl.onLimited, host, req, check).then((res) => out(call, req, res, 'other'))
  const now = limitedNow(rl, check)
  if (now !== undefined)
    return Promise.resolve(refused(call, req, now, check.headers, host.request(req)))
  return limitedResponse(rl, req, check).then((limited) =>
    refused(call, req, limited, check.headers, host.request(req)),
  )
}

async function limitedBy<Req>(
  onLimited: FetchOnLimited<Req>,
  host: FetchHost<Req>,
  req: Req,
  check: RateLimitCheck,
): Promise<Response> {
  const res = await onLimited(req, check.decision)
  if (!isResponse(res))
    throw new LimiterTypeError('onLimited', res, 'a Response (or a promise of one)')
  return decorate(host.request(req), res, check.headers, check)
}
