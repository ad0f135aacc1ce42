// LimiterGuard: runs core's request check for the handler's limiter and maps the outcome to Nest:
// true, a wait for a reserved slot, or a RateLimitException for Nest's exception layer.
import { LimiterTypeError } from '@limiter/core'
import {
  type CheckResult,
  type CloseTarget,
  type HeaderTarget,
  type LimitedResponse,
  limitedResponse,
  type RateLimitCheck,
  settleCheck,
  whenDue,
  withCheck,
} from '@limiter/core/http'
import {
  type CanActivate,
  type ExecutionContext,
  HttpException,
  Inject,
  Injectable,
} from '@nestjs/common'
import { Reflector } from '@nestjs/core'
import { RateLimitException } from './exception.js'
import { LimiterRegistry, type Resolved } from './limiters.js'
import type { RequestLike } from './types.js'

/** Node's response (Express's `res`, Fastify's `reply.raw`), as the kit watches it. */
type RawResponse = CloseTarget & { readonly headersSent: boolean; end(body?: string): unknown }

/** The platform's response in the few verbs the guard needs. */
interface Response {
  /** Node's response: refunds and lease releases are armed on its `finish` and `close`. */
  readonly raw: RawResponse
  /** Where the headers go: Express's `res`, or Fastify's reply (it writes them at send). */
  readonly headers: Omit<HeaderTarget, 'headersSent'>
  sent(): boolean
  send(status: number, contentType: string, body: string): void
}

interface FastifyReplyLike {
  readonly raw: RawResponse
  readonly sent: boolean
  getHeader(name: string): ReturnType<HeaderTarget['getHeader']>
  header(name: string, value: string): FastifyReplyLike
  code(status: number): FastifyReplyLike
  send(body: string): unknown
}

function responseOf(res: unknown): Response {
  const reply = res as FastifyReplyLike
  if (typeof reply.raw === 'object' && reply.raw !== null)
    return {
      raw: reply.raw,
      headers: {
        getHeader: (name) => reply.getHeader(name),
        setHeader: (name, value) => reply.header(name, value),
      },
      sent: () => reply.sent,
      send: (status, type, body) => reply.code(status).header('content-type', type).send(body),
    }
  const raw = res as RawResponse & Omit<HeaderTarget, 'headersSent'> & { statusCode: number }
  return {
    raw,
    headers: raw,
    sent: () => raw.headersSent,
    send(status, type, body) {
      raw.statusCode = status
      raw.setHeader('Content-Type', type)
      raw.end(body)
    },
  }
}

/**
 * The rate-limiting guard. Register it for the whole app (`{ provide: APP_GUARD, useClass:
 * LimiterGuard }`) or on controllers (`@UseGuards(LimiterGuard)`), next to
 * `LimiterModule.forRoot()`. It limits handlers with `@RateLimit` (and, when `forRoot` names a
 * policy, every other handler), skips `@SkipRateLimit()` and non-HTTP contexts, and sets
 * `req.rateLimit` to the decision. A limited request throws a {@link RateLimitException}.
 */
export class LimiterGuard implements CanActivate {
  readonly #limiters: LimiterRegistry
  readonly #reflector: Reflector

  constructor(limiters: LimiterRegistry, reflector: Reflector) {
    throttlerHooks(new.target)
    this.#limiters = limiters
    this.#reflector = reflector
  }

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (context.getType() !== 'http') return true
    const found = this.#limiters.handler(context.getClass(), context.getHandler(), this.#reflector)
    if (found === null) return true
    const http = context.switchToHttp()
    const req = http.getRequest<RequestLike>()
    if (this.#limiters.seen(req)) return true
    const res = responseOf(http.getResponse<unknown>())
    const { rl } = found
    // With synchronous callbacks and MemoryStore the whole check runs in this turn: no promise.
    // (A promise of a promise is one promise at run time.)
    return withCheck(
      rl,
      req,
      found.scope,
      (check) => settle(rl, context, req, res, check),
      (error) => {
        throw error
      },
    ) as boolean | Promise<boolean>
  }
}

// @nestjs/throttler's ThrottlerGuard hooks, which a subclass overrides, and the option that does
// the same here. LimiterGuard calls none of them: a migrated subclass would key, skip and answer
// as if it were not there, so it fails as Nest builds it instead.
const THROTTLER_HOOKS: Readonly<Record<string, string>> = {
  getTracker: '`key: (req) => ...`',
  generateKey: '`key: (req) => ...`',
  shouldSkip: '`skip: (req) => ...` (or @SkipRateLimit())',
  handleRequest: 'the options of forRoot and @RateLimit',
  throwThrottlingException: '`onLimited` (or an exception filter for RateLimitException)',
  getErrorMessage: '`message`',
  getRequestResponse: 'nothing: the guard reads HTTP requests of both platforms itself',
}

function throttlerHooks(guard: { readonly prototype: object; readonly name: string }): void {
  for (
    let p = guard.prototype;
    p !== null && p !== LimiterGuard.prototype;
    p = Object.getPrototypeOf(p)
  ) {
    const hook = Object.getOwnPropertyNames(p).find((name) => Object.hasOwn(THROTTLER_HOOKS, name))
    if (hook !== undefined)
      throw new LimiterTypeError(
        `${guard.name}.${hook}`,
        (p as Record<string, unknown>)[hook],
        `no override (a @nestjs/throttler ThrottlerGuard hook, which LimiterGuard never calls: use ${THROTTLER_HOOKS[hook]} instead)`,
      )
  }
}

// The guard's parameters by token: the package is built without emitted decorator metadata.
Injectable()(LimiterGuard)
Inject(LimiterRegistry)(LimiterGuard, undefined, 0)
Inject(Reflector)(LimiterGuard, undefined, 1)

function settle(
  rl: Resolved,
  context: ExecutionContext,
  req: RequestLike,
  res: Response,
  check: CheckResult,
): boolean | Promise<boolean> {
  if (check === undefined) return true
  if (check.denied) return denied(res, check.response)
  req.rateLimit = check.decision
  const outcome = settleCheck(rl, check, res.raw, res.headers)
  if (outcome !== 'proceed') return limited(rl, context, req, res, check, outcome === 'ended')
  if (check.decision.delayMs === 0) return true
  // A reserved slot (maxDelay): wait for it. A client gone meanwhile gets its slot back and its
  // request never reaches the handler: the guard's promise then never settles (nothing to send).
  return new Promise((resolve) => whenDue(rl, check, res.raw, () => resolve(true)))
}

// A request `deny` refused: an HttpException (403) whose body is the problem document, nothing
// counted. Not a RateLimitException: no quota was exceeded, no decision was made.
function denied(res: Response, response: LimitedResponse): never {
  res.headers.setHeader('Content-Type', response.contentType)
  throw new HttpException(JSON.parse(response.body) as Record<string, unknown>, response.status)
}

// A refused request: `onLimited`, or a RateLimitException with the body of `message` or the
// default problem. A text body is sent here (Nest's filters would wrap a string in JSON); the
// exception thrown after it only stops the pipeline (Nest's filter sees the response sent), as it
// does for a response that had started before the guard ran (`ended`: the kit ended it).
async function limited(
  rl: Resolved,
  context: ExecutionContext,
  req: RequestLike,
  res: Response,
  check: RateLimitCheck,
  ended: boolean,
): Promise<never> {
  if (rl.onLimited !== undefined && !ended) await rl.onLimited(context, check.decision)
  const response = await limitedResponse(rl, req, check)
  const exception = new RateLimitException(response, check.decision)
  if (res.sent()) throw exception
  if (typeof exception.getResponse() === 'string')
    res.send(response.status, response.contentType, response.body)
  else res.headers.setHeader('Content-Type', response.contentType)
  throw exception
}
