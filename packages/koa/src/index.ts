// @limiter/koa: rateLimit(options) -> Koa 2/3 middleware over @limiter/core's HTTP glue.

import type { ServerResponse } from 'node:http'
import type { Decision } from '@limiter/core'
import {
  type CheckResult,
  type RateLimitOptions as CoreOptions,
  type LimitedResponse,
  limitedResponse,
  owesWhenOver,
  type RateLimitCheck,
  type ResolvedRateLimit,
  resolveRateLimitOptions,
  settleCheck,
  untilHandlerDone,
  whenDue,
  withCheck,
} from '@limiter/core/http'
import type { DefaultContext, DefaultState, Middleware, Next, ParameterizedContext } from 'koa'
import { routeScope } from './route-scope.js'

export {
  closeLimiters,
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
 * What a limiter adds to `ctx.state`. Koa's `DefaultState` already has it; an app with a state
 * type of its own adds it: `new Koa<MyState & RateLimitState>()`.
 */
export interface RateLimitState {
  /** The decision of the last rate limiter this request passed through. */
  rateLimit?: Decision
}

// Typed `ctx.state.rateLimit` for apps on Koa's default state.
declare module 'koa' {
  interface DefaultState extends RateLimitState {}
}

/**
 * Full control of a limited response: set `ctx.body` (and `ctx.status`, already `statusCode`).
 * The headers, `Retry-After` included, are already set. May be async.
 */
export type OnLimited<StateT = DefaultState, ContextT = DefaultContext> = (
  ctx: ParameterizedContext<StateT, ContextT>,
  decision: Decision,
) => unknown

/** Options for {@link rateLimit}: the shared options, typed with Koa's context. */
export type RateLimitOptions<StateT = DefaultState, ContextT = DefaultContext> = CoreOptions<
  ParameterizedContext<StateT, ContextT>,
  OnLimited<StateT, ContextT>
>

function send(
  ctx: { status: number; type: string; body: unknown },
  response: LimitedResponse,
): void {
  ctx.status = response.status
  ctx.type = response.contentType
  ctx.body = response.body
}

/**
 * An admitted request goes on downstream: at once, or after its reserved slot's delay
 * (`maxDelay`), or not at all once the client has left. What it owes (a lease) waits for the
 * downstream to be over (Koa skips `res.end` for a client gone) and a streamed body to end or
 * close; the usual request just goes on.
 */
function proceed<Ctx extends { readonly res: ServerResponse; readonly body: unknown }>(
  rl: ResolvedRateLimit<Ctx, unknown>,
  check: RateLimitCheck,
  ctx: Ctx,
  next: Next,
): unknown {
  const downstream = owesWhenOver(rl, check)
    ? () => untilHandlerDone(ctx.res, next, () => ctx.body)
    : next
  if (check.decision.delayMs === 0) return downstream()
  return new Promise((resolve, reject) => {
    whenDue(
      rl,
      check,
      ctx.res,
      () => downstream().then(resolve, reject),
      () => resolve(undefined),
    )
  })
}

/**
 * Creates rate-limiting middleware for Koa 2 and 3, for `app.use` or an @koa/router route.
 * Options are validated here: a bad one throws a `TypeError`/`RangeError` naming it. Allowed
 * requests get the rate-limit headers and `ctx.state.rateLimit`; limited ones get `statusCode`
 * (429), `Retry-After` and `message` (an RFC 9457 problem by default). Errors from `key`, `cost`,
 * `skip`, `message` or `onLimited` are thrown into Koa's error handling.
 *
 * @example
 * app.use(rateLimit({ limit: 100, window: '1m', redis }))
 * router.get('/search', rateLimit({ limit: 10, window: '1s', algorithm: 'token-bucket', burst: 20 }), h)
 */
export function rateLimit<StateT = DefaultState, ContextT = DefaultContext>(
  options: RateLimitOptions<StateT, ContextT>,
): Middleware<StateT, ContextT> {
  type Ctx = ParameterizedContext<StateT, ContextT>
  const rl = resolveRateLimitOptions(options, {
    ip: (ctx: Ctx) => ctx.ip,
    peer: (ctx: Ctx) => ctx.req.socket.remoteAddress,
    headers: (ctx: Ctx) => ctx.req.headers,
    trust: (ctx: Ctx) => ({ framework: 'koa', app: ctx.app }),
  })

  const limited = async (ctx: Ctx, check: RateLimitCheck): Promise<void> => {
    if (rl.onLimited !== undefined) {
      // A sane default should the handler set no status: Koa would otherwise answer 404.
      ctx.status = rl.statusCode
      await rl.onLimited(ctx, check.decision)
      // one that only looked (logged, counted: koa-ratelimit's notifications) gets the default
      // body, `message` included
      if (ctx.body != null || ctx.respond === false || ctx.res.headersSent) return
    }
    send(ctx, await limitedResponse(rl, ctx, check))
  }

  const settle = (ctx: Ctx, next: Next, check: CheckResult): unknown => {
    if (check === undefined) return next()
    if (check.denied) return send(ctx, check.response)
    ;(ctx.state as RateLimitState).rateLimit = check.decision
    // Straight onto Node's response, which Koa answers from: merged with other limiters' headers.
    const outcome = settleCheck(rl, check, ctx.res, ctx.res)
    if (outcome === 'proceed') return proceed(rl, check, ctx, next)
    if (outcome === 'ended') return undefined
    return limited(ctx, check)
  }

  // With synchronous callbacks and MemoryStore the check runs in this turn: straight on to next.
  // (Koa's compose turns a synchronous throw into a rejection.)
  const middleware: Middleware<StateT, ContextT> = (ctx, next) =>
    withCheck(
      rl,
      ctx,
      routeScope(ctx, middleware),
      (check) => settle(ctx, next, check),
      (error) => {
        throw error
      },
    )
  return middleware
}
