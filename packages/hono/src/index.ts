// @limiter/hono: rateLimit(options) -> Hono 4 middleware over @limiter/core's Fetch kit, on every
// runtime Hono runs on (Node through @hono/node-server, Bun, Deno, Workers).
import { type Decision, LimiterTypeError } from '@limiter/core'
import {
  type AnswerFrom,
  type AnsweringCall,
  type FetchRateLimitOptions,
  fetchKit,
  optionsObject,
  type RespondInit,
  type WaitUntil,
  wireRecord,
} from '@limiter/core/fetch'
import type { Context, Env, MiddlewareHandler } from 'hono'
import { bindingAddress, bindingHeader, IP_HINT } from './client-ip.js'
import { runsFirst } from './first.js'
import { routeScope } from './route-scope.js'

export {
  type Decision,
  type HeaderStandard,
  type IpKeyOptions,
  ipKey,
  MemoryStore,
  RedisStore,
  routeKey,
  userKey,
} from '@limiter/core'

/**
 * The variables a limiter sets on the context: `c.get('rateLimit')`. Hono's `ContextVariableMap`
 * has them already; an app with variables of its own may add them:
 * `new Hono<{ Variables: MyVariables & RateLimitVariables }>()`.
 */
export interface RateLimitVariables {
  /** The decision of the last rate limiter this request passed through. */
  rateLimit?: Decision
}

declare module 'hono' {
  interface ContextVariableMap extends RateLimitVariables {}
}

/** What a runtime's Hono `getConnInfo` helper returns (the part the limiter reads). */
export interface ConnInfoLike {
  readonly remote: { readonly address?: string | undefined }
}

/** Full control of a limited response: return it (the headers are added to it). May be async. */
export type OnLimited<E extends Env = Env> = (
  c: Context<E>,
  decision: Decision,
) => Response | Promise<Response>

/** Options for {@link rateLimit}: the shared options, callbacks typed with Hono's context. */
export type RateLimitOptions<E extends Env = Env> = FetchRateLimitOptions<Context<E>> & {
  /**
   * Your runtime's Hono helper for the client address (`getConnInfo` from
   * 'hono/cloudflare-workers', 'hono/bun', 'hono/deno', '@hono/node-server/conninfo', ...).
   * Default: the address in the server binding on @hono/node-server, Bun and Deno. `ip`, if
   * given, wins.
   */
  readonly getConnInfo?: ((c: Context<E>) => ConnInfoLike) | undefined
  readonly onLimited?: OnLimited<E> | undefined
}

// The runtime's waitUntil, when it has an execution context (Workers, Vercel, Deno Deploy).
function waitUntilOf(c: Context): WaitUntil | undefined {
  try {
    const ctx = c.executionCtx
    return typeof ctx.waitUntil === 'function' ? (p) => ctx.waitUntil(p) : undefined
  } catch {
    // Hono throws when the runtime gave no execution context (Node, Bun)
    return undefined
  }
}

// Hono's `c.res` setter copies the previous response's headers over the new one. After the
// handler ran, that would undo a merge of several limiters' headers: clearing it first replaces
// the response as it is. A refusal (the handler never ran) keeps what earlier middleware set
// with `c.header()` (CORS headers): ours was built by `c.body()`, which puts them on it (or,
// by a limiter that runs first, with nothing before it to keep), and goes in as it is (reading
// the `c.res` getter first would make Hono copy it into a streamed body); an `onLimited`
// response gets them through the getter and the setter's copy.
function answer(c: Context, res: Response, from: AnswerFrom): void {
  if (from === 'refusal') {
    c.res = res
    return
  }
  if (res === c.res) return
  if (from === 'handler') c.res = undefined
  c.res = res
}

// A refusal. Through `c.body()` by default: Hono sets our fields onto what earlier middleware
// prepared with `c.header()` (CORS headers), in a `Headers` it builds (Hono types `status` as its
// contentful codes; ours are 403, 429 and 503). A limiter that runs first has nothing to keep:
// its fields go as a plain record, which @hono/node-server writes as it is (no `Headers` built,
// set, then read back), listed as a `Headers` would list them.
function refusalOf(c: Context, body: string, init: RespondInit, first: boolean): Response {
  const fields = first ? wireRecord(init.headers) : undefined
  if (fields !== undefined) return new Response(body, { status: init.status, headers: fields })
  return (c.body as (data: string, status: number, headers: Record<string, string>) => Response)(
    body,
    init.status,
    init.headers,
  )
}

// How every request of a Hono limiter goes through the kit: one object per middleware, its
// callbacks reading the context they are given (nothing is built per request). `self` is the
// middleware (whether it runs first).
function honoCall(scoped: boolean, self: () => unknown): AnsweringCall<Context> {
  return {
    scope: scoped ? routeScope : '',
    // read only when something is given back: Hono throws off Workers, which costs every request
    waitUntil: (promise, c) => waitUntilOf(c)?.(promise),
    decided: (decision, c) => c.set('rateLimit', decision),
    // our fields go where `c.text()`, `c.json()` and `c.body()` pick them up: the response they
    // build then needs no Headers read or copy (a Response the handler makes itself is decorated)
    prepare: (name, value, c) => c.header(name, value),
    respond: (body, init, c) => refusalOf(c, body, init, runsFirst(c, self())),
    response: (c) => c.res,
    answer,
    ended: nodeResponseEnded,
  }
}

/** The part of a Node `ServerResponse` that says when a response is over. */
interface NodeResponseLike {
  once(event: 'close', listener: () => void): unknown
  readonly writableFinished: boolean
  readonly statusCode: number
}

// On @hono/node-server (its bindings hold the Node response as `outgoing`): `gone` once that
// response closes, with its status if it was sent whole. A middleware further out that throws
// after the handler makes Hono answer from `onError`, dropping our body unread: its lease would
// otherwise stay held until its window ends. Other runtimes have no such binding.
function nodeResponseEnded(c: Context, gone: (status: number | undefined) => void): void {
  const outgoing = (c.env as { outgoing?: Partial<NodeResponseLike> } | undefined)?.outgoing
  if (typeof outgoing?.once !== 'function') return
  const res = outgoing as NodeResponseLike
  res.once('close', () => gone(res.writableFinished ? res.statusCode : undefined))
}

/**
 * Creates rate-limiting middleware for Hono 4, for `app.use(...)` or one route
 * (`app.get('/x', rateLimit({ ... }), handler)`). Options are validated here: a bad one throws a
 * `TypeError`/`RangeError` naming it. Allowed requests get the rate-limit headers and
 * `c.get('rateLimit')`; limited ones get `statusCode` (429), `Retry-After` and `message` (an RFC
 * 9457 problem by default). A concurrency lease ends when the response body has been sent.
 * Errors from `key`, `cost`, `skip` or `message` go to Hono's `onError`.
 *
 * @example
 * app.use(rateLimit({ limit: 100, window: '1m', redis }))
 * app.post('/login', rateLimit({ limit: 5, window: '15m', key: (c) => c.req.header('x-user') ?? 'anon' }), h)
 */
export function rateLimit<E extends Env = Env>(options: RateLimitOptions<E>): MiddlewareHandler<E> {
  // checked before it is taken apart: an array would spread into options named `0`, `1`...
  optionsObject('options', options ?? {})
  const { getConnInfo, ...rest } = (options ?? {}) as RateLimitOptions<E>
  if (getConnInfo !== undefined && typeof getConnInfo !== 'function')
    throw new LimiterTypeError('getConnInfo', getConnInfo, "a runtime's Hono getConnInfo helper")
  const viaHelper =
    typeof getConnInfo === 'function' ? (c: Context<E>) => getConnInfo(c).remote.address : undefined
  const kit = fetchKit<Context<E>>(
    { ...rest, ip: rest.ip ?? viaHelper } as FetchRateLimitOptions<Context<E>>,
    {
      request: (c) => c.req.raw,
      ip: bindingAddress,
      header: bindingHeader,
      ipHint: IP_HINT,
    },
  )
  // a limiter with a name of its own counts across routes: no route to read
  const call = honoCall(kit.resolved.scoped, () => middleware) as AnsweringCall<Context<E>>
  // the kit's promise, returned as it is: compose awaits it (no step of our own around `next`)
  const middleware: MiddlewareHandler<E> = (c, next) =>
    kit.handle(c, next, call) as Promise<undefined>
  return middleware
}
