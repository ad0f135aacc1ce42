// The request flow every adapter shares: skip, key, cost, consume, headers, limited response, refund.
import { nowMs } from '../clock.js'
import type { Decision } from '../decision.js'
import { LimiterError, type LimiterErrorCode } from '../errors.js'
import { failureOf } from '../failure.js'
import { decideNow } from '../limiter.js'
import { formatHeaders, type HeaderPair, type HeaderPolicy } from './headers.js'
import { type HeaderValue, mergeHeaders } from './merge-headers.js'
import type { LimitedBody, MessageBody, ResolvedRateLimit } from './options.js'
import { problemBody, unavailableBody } from './problem.js'

/** The outcome of {@link checkRequest} for a request that was counted. */
export interface RateLimitCheck {
  readonly decision: Decision
  /** The store key (the route scope included). */
  readonly key: string
  readonly cost: number
  /** The policy as clients see it (name, limit, window). */
  readonly policy: HeaderPolicy
  /** Header pairs to merge into the response (`Retry-After` included on a denial). */
  readonly headers: HeaderPair[]
}

/** A limited response: status, content type and body text. */
export interface LimitedResponse extends LimitedBody {
  readonly status: number
}

/** Where {@link applyHeaders} writes: Node's `ServerResponse` (and Express's) has this shape. */
export interface HeaderTarget {
  readonly headersSent: boolean
  getHeader(name: string): HeaderValue
  setHeader(name: string, value: string): unknown
}

function describe(value: unknown): string {
  if (typeof value === 'string') return value === '' ? 'an empty string' : JSON.stringify(value)
  if (value === null || value === undefined) return String(value)
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`
}

function misbehaved(
  option: string,
  what: string,
  code: LimiterErrorCode,
  cause?: unknown,
): LimiterError {
  return new LimiterError(
    code,
    `rateLimit option \`${option}\` ${what}`,
    cause === undefined ? undefined : { cause },
  )
}

/** A value, or a promise of one: what each step of a check returns. */
export type MaybePromise<T> = T | Promise<T>

/** Whether `value` is a promise (or any thenable) rather than a plain value. */
export function isThenable<T>(value: MaybePromise<T> | PromiseLike<T>): value is PromiseLike<T> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  )
}

function threw(option: string, code: LimiterErrorCode, error: unknown): LimiterError {
  return misbehaved(
    option,
    `threw: ${error instanceof Error ? error.message : String(error)}`,
    code,
    error,
  )
}

// Runs a user callback; its throw or rejection becomes a LimiterError naming the option.
function invoke<T>(
  option: string,
  code: LimiterErrorCode,
  run: () => T | PromiseLike<T>,
): MaybePromise<T> {
  let value: T | PromiseLike<T>
  try {
    value = run()
  } catch (error) {
    throw threw(option, code, error)
  }
  if (!isThenable(value)) return value
  return Promise.resolve(value).then(undefined, (error: unknown) => {
    throw threw(option, code, error)
  })
}

/**
 * Runs the shared flow for one request: `skip`, then `key` and `cost` (a callback that throws or
 * returns a bad value rejects with a `LimiterError` naming the option), then `consume`. Resolves
 * `undefined` when the request is skipped. `scope` is the adapter's route scope (method and route
 * pattern, or mount path; `''` for none): for a limiter with the default name it separates
 * counters per route.
 *
 * @example
 * const check = await checkRequest(rl, req, routeKey(req.method, pattern))
 */
export async function checkRequest<Req>(
  rl: ResolvedRateLimit<Req, unknown>,
  req: Req,
  scope = '',
): Promise<RateLimitCheck | undefined> {
  return beginCheck(rl, req, scope)
}

/**
 * {@link checkRequest} without the promise when it is not needed: with synchronous (or no)
 * `skip`, `key` and `cost` callbacks and an in-process store, the check is returned directly,
 * so an adapter can go on in the same turn; otherwise a promise of it. A synchronous callback's
 * failure throws (the adapter passes it on as it would a rejection).
 */
export function beginCheck<Req>(
  rl: ResolvedRateLimit<Req, unknown>,
  req: Req,
  scope = '',
): MaybePromise<RateLimitCheck | undefined> {
  const { skip } = rl
  if (skip === undefined) return keyStep(rl, req, scope)
  const skipped = invoke('skip', 'ERR_LIMITER_OPTION', () => skip(req))
  if (isThenable(skipped)) return skipped.then((yes) => (yes ? undefined : keyStep(rl, req, scope)))
  return skipped ? undefined : keyStep(rl, req, scope)
}

function keyStep<Req>(
  rl: ResolvedRateLimit<Req, unknown>,
  req: Req,
  scope: string,
): MaybePromise<RateLimitCheck> {
  const userKey = rl.defaultKey ? rl.key(req) : invoke('key', 'ERR_LIMITER_KEY', () => rl.key(req))
  if (isThenable(userKey)) return Promise.resolve(userKey).then((k) => costStep(rl, req, scope, k))
  return costStep(rl, req, scope, userKey)
}

function costStep<Req>(
  rl: ResolvedRateLimit<Req, unknown>,
  req: Req,
  scope: string,
  userKey: unknown,
): MaybePromise<RateLimitCheck> {
  if (typeof userKey !== 'string' || userKey === '') {
    throw misbehaved(
      'key',
      `returned ${describe(userKey)} (expected a non-empty string)`,
      'ERR_LIMITER_KEY',
    )
  }
  const { cost } = rl
  if (typeof cost !== 'function') return consumeStep(rl, scope, userKey, cost)
  const value: unknown = invoke('cost', 'ERR_LIMITER_COST', () => cost(req))
  if (isThenable(value))
    return Promise.resolve(value).then((v) => consumeStep(rl, scope, userKey, checkedCost(rl, v)))
  return consumeStep(rl, scope, userKey, checkedCost(rl, value))
}

function checkedCost(rl: ResolvedRateLimit<never, unknown>, value: unknown): number {
  const { burst } = rl.limiter.policy
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > burst) {
    throw misbehaved(
      'cost',
      `returned ${describe(value)} (expected an integer from 1 to burst, ${burst})`,
      'ERR_LIMITER_COST',
    )
  }
  return value
}

function consumeStep(
  rl: ResolvedRateLimit<never, unknown>,
  scope: string,
  userKey: string,
  cost: number,
): MaybePromise<RateLimitCheck> {
  const scoped = rl.scoped && scope !== ''
  // '#' never occurs in a route pattern or mount path, so scoped keys cannot collide.
  const key = scoped ? `${scope}#${userKey}` : userKey
  const decision = decideNow(rl.limiter, key, cost)
  if (isThenable(decision))
    return decision.then((d) => checked(rl, scoped ? scope : '', key, cost, d))
  return checked(rl, scoped ? scope : '', key, cost, decision)
}

function checked(
  rl: ResolvedRateLimit<never, unknown>,
  scope: string,
  key: string,
  cost: number,
  decision: Decision,
): RateLimitCheck {
  const policy = rl.headerPolicy(scope)
  return {
    decision,
    key,
    cost,
    policy,
    headers: formatHeaders(rl.headers, policy, decision, nowMs()),
  }
}

/**
 * Writes the check's headers, merged with what the response already holds (several limiters
 * append list members). Returns false, writing nothing, once the response has started.
 */
export function applyHeaders(target: HeaderTarget, headers: readonly HeaderPair[]): boolean {
  if (target.headersSent) return false
  writeMerged(target, headers)
  return true
}

function writeMerged(
  target: Omit<HeaderTarget, 'headersSent'>,
  headers: readonly HeaderPair[],
): void {
  // The usual case, one limiter: nothing to merge with, so the pairs go out as they are.
  let fresh = true
  for (const pair of headers) {
    if (target.getHeader(pair[0]) !== undefined) {
      fresh = false
      break
    }
  }
  const pairs = fresh ? headers : mergeHeaders(headers, (n) => target.getHeader(n))
  for (const [name, value] of pairs) target.setHeader(name, value)
}

function bodyOf(value: unknown): LimitedBody {
  if (typeof value === 'string') return { contentType: 'text/plain; charset=utf-8', body: value }
  const body = value !== null && typeof value === 'object' ? safeStringify(value) : undefined
  if (body === undefined)
    throw misbehaved(
      'message',
      `returned ${describe(value)} (expected a string or an object)`,
      'ERR_LIMITER_OPTION',
    )
  return { contentType: 'application/json; charset=utf-8', body }
}

function safeStringify(value: object): string | undefined {
  try {
    return JSON.stringify(value)
  } catch {
    return undefined
  }
}

/**
 * The body of a limited response: `message` (string as text, object as JSON, or its callback's
 * result), or by default an RFC 9457 problem document of type `quota-exceeded`. A denial caused
 * by a store failure (`failureMode: 'closed'`) gets 503 and a Service Unavailable problem instead.
 */
export async function limitedResponse<Req>(
  rl: ResolvedRateLimit<Req, unknown>,
  req: Req,
  check: RateLimitCheck,
): Promise<LimitedResponse> {
  // A denial because the store is down (failureMode 'closed') is the server's fault: 503.
  if (failureOf(check.decision) !== undefined)
    return { status: 503, ...unavailableBody(check.decision) }
  const status = rl.statusCode
  const { message } = rl
  if (message !== undefined) {
    const value: MessageBody = await invoke('message', 'ERR_LIMITER_OPTION', () =>
      message(req, check.decision),
    )
    return { status, ...bodyOf(value) }
  }
  return { status, ...(rl.messageBody ?? problemBody(status, check.policy, check.decision)) }
}

/**
 * For `skipSuccessfulRequests` / `skipFailedRequests`: returns a function to call with the final
 * status (or `undefined` when the client went away before the response finished). It refunds the
 * request's cost at most once however often it is called, passing the decision so sliding-log
 * removes exactly this request's entry. `undefined` when there is nothing to refund.
 */
export function refundOnce<Req>(
  rl: ResolvedRateLimit<Req, unknown>,
  check: RateLimitCheck,
): ((status: number | undefined) => void) | undefined {
  if (!check.decision.allowed || !(rl.skipSuccessfulRequests || rl.skipFailedRequests))
    return undefined
  let settled = false
  return (status) => {
    if (settled) return
    settled = true
    const succeeded = status !== undefined && status < 400
    if (succeeded ? rl.skipSuccessfulRequests : rl.skipFailedRequests) {
      // Store failures are reported through onError by the limiter; nothing is left to reject.
      rl.limiter.refund(check.key, check.cost, check.decision).catch(() => {})
    }
  }
}

/** The part of Node's `ServerResponse` that {@link refundWhenDone} watches. */
export interface FinishTarget {
  readonly statusCode: number
  readonly writableFinished: boolean
  once(event: 'finish' | 'close', listener: () => void): unknown
}

/**
 * Wires {@link refundOnce} to a Node response: `finish` reports the status, a `close` without
 * `finish` (the client aborted) counts as failed. Both events may fire; the refund happens once.
 */
export function refundWhenDone<Req>(
  rl: ResolvedRateLimit<Req, unknown>,
  check: RateLimitCheck,
  res: FinishTarget,
): void {
  const settle = refundOnce(rl, check)
  if (settle === undefined) return
  // `finish` itself says the response finished: light-my-request (Fastify's inject) emits it
  // while `writableFinished` is still false.
  res.once('finish', () => settle(res.statusCode))
  res.once('close', () => settle(res.writableFinished ? res.statusCode : undefined))
}

/** What an adapter does after {@link settleCheck}. */
export type CheckOutcome = 'proceed' | 'ended' | 'limited'

/**
 * The step every adapter takes after {@link checkRequest}: write the headers into `headers`
 * (merged with what is already there), then for an allowed request arm the refund and answer
 * `'proceed'`; for a limited one answer `'limited'` (the adapter sends `onLimited` or
 * {@link limitedResponse}), or, when the response had already started so no 429 can be sent,
 * end it and answer `'ended'`. `headers` is where the headers go: Node's response itself for Express and Koa.
 */
export function settleCheck<Req>(
  rl: ResolvedRateLimit<Req, unknown>,
  check: RateLimitCheck,
  res: FinishTarget & { readonly headersSent: boolean; end(): unknown },
  headers: Omit<HeaderTarget, 'headersSent'>,
): CheckOutcome {
  const writable = !res.headersSent
  if (writable) writeMerged(headers, check.headers)
  if (check.decision.allowed) {
    refundWhenDone(rl, check, res)
    return 'proceed'
  }
  if (!writable) {
    res.end()
    return 'ended'
  }
  return 'limited'
}
