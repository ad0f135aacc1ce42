// @limiter/express: rateLimit(options) -> an Express 4/5 RequestHandler over @limiter/core's HTTP glue.
import type { Decision } from '@limiter/core'
import {
  type CheckResult,
  type RateLimitOptions as CoreOptions,
  type LimitedResponse,
  limitedResponse,
  type RateLimitCheck,
  resolveRateLimitOptions,
  settleCheck,
  whenDue,
  withCheck,
} from '@limiter/core/http'
import type { NextFunction, Request, RequestHandler, Response } from 'express'
import { routeScopes } from './route-scope.js'

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

declare global {
  namespace Express {
    interface Request {
      /** The decision of the last rate limiter this request passed through. */
      rateLimit?: Decision
    }
  }
}

/** Full control of a limited response. Headers, `Retry-After` included, are already set. */
export type OnLimited = (
  req: Request,
  res: Response,
  next: NextFunction,
  decision: Decision,
) => unknown

/** Options for {@link rateLimit}: the shared options, typed with Express's request. */
export type RateLimitOptions = CoreOptions<Request, OnLimited>

function send(res: Response, response: LimitedResponse): void {
  res.status(response.status).set('Content-Type', response.contentType).send(response.body)
}

/**
 * Creates rate-limiting middleware. Options are validated here: a bad one throws a
 * `TypeError`/`RangeError` naming it. Allowed requests get the rate-limit headers and
 * `req.rateLimit`; limited ones get `statusCode` (429), `Retry-After` and `message` (an RFC 9457
 * problem by default). Errors from `key`, `cost`, `skip` or `message` go to `next(err)`.
 *
 * @example
 * app.use(rateLimit({ limit: 100, window: '1m' }))
 * app.post('/login', rateLimit({ limit: 5, window: '15m', algorithm: 'sliding-log',
 *   key: (req) => `${req.body.email}`, redis }), handler)
 */
export function rateLimit(options: RateLimitOptions): RequestHandler {
  const rl = resolveRateLimitOptions(options, {
    ip: (req: Request) => req.ip,
    peer: (req: Request) => req.socket.remoteAddress,
    headers: (req: Request) => req.headers,
    trust: (req: Request) => ({ framework: 'express', app: req.app }),
  })

  const limited = async (
    req: Request,
    res: Response,
    next: NextFunction,
    check: RateLimitCheck,
  ): Promise<void> => {
    if (rl.onLimited !== undefined) {
      await rl.onLimited(req, res, next, check.decision)
      return
    }
    send(res, await limitedResponse(rl, req, check))
  }

  const settle = (req: Request, res: Response, next: NextFunction, check: CheckResult): void => {
    if (check === undefined) {
      next()
      return
    }
    if (check.denied) {
      send(res, check.response)
      return
    }
    req.rateLimit = check.decision
    const outcome = settleCheck(rl, check, res, res)
    // after a reserved slot's delay (maxDelay), if the client is still there
    if (outcome === 'proceed') whenDue(rl, check, res, next)
    else if (outcome === 'limited') limited(req, res, next, check).catch(next)
  }

  // With synchronous callbacks and MemoryStore the whole check runs in this turn: no promise.
  const scopeOf = routeScopes()
  const middleware: RequestHandler = (req, res, next) => {
    withCheck(rl, req, scopeOf(req, middleware), (check) => settle(req, res, next, check), next)
  }
  return middleware
}
