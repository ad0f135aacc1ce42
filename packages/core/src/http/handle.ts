// The response side every adapter shares: headers, the limited response, refunds.
import { nowMs } from '../common/clock.js'
import { describeValue } from '../common/errors.js'
import { failureOf } from '../limiter/failure.js'
import { invoke, misbehaved } from './callbacks.js'
import { formatHeaders, type HeaderPair } from './headers.js'
import { type HeaderValue, mergeHeaders } from './merge-headers.js'
import {
  clientGone,
  type LifecycleTarget,
  onSocketClose,
  settleWhenOver,
} from './node-lifecycle.js'
import type { LimitedBody, MessageBody, ResolvedRateLimit } from './options.js'
import { giveBackReservation, owedOnce } from './owed.js'
import { messageBodyOf, overloadedBody, problemBody, unavailableBody } from './problem.js'
import type { LimitedResponse, RateLimitCheck } from './types.js'

/** Where {@link applyHeaders} writes: Node's `ServerResponse` (and Express's) has this shape. */
export interface HeaderTarget {
  readonly headersSent: boolean
  getHeader(name: string): HeaderValue
  setHeader(name: string, value: string): unknown
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
  check?: RateLimitCheck,
): void {
  // The usual case, one limiter: nothing to merge with, so the pairs go out as they are.
  let fresh = true
  for (const pair of headers) {
    if (target.getHeader(pair[0]) !== undefined) {
      fresh = false
      break
    }
  }
  const pairs = fresh
    ? headers
    : mergeHeaders(
        headers,
        (n) => target.getHeader(n),
        check === undefined
          ? undefined
          : (standard) => formatHeaders([standard], check.policy, check.decision, nowMs),
      )
  for (const [name, value] of pairs) target.setHeader(name, value)
}

function bodyOf(value: unknown): LimitedBody {
  const body = messageBodyOf(value)
  if (body === undefined)
    throw misbehaved(
      'message',
      `returned ${describeValue(value, true)} (expected a string or an object)`,
      'ERR_LIMITER_OPTION',
    )
  return body
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
  const now = limitedNow(rl, check)
  if (now !== undefined) return now
  const { message } = rl
  const value: MessageBody = await invoke('message', 'ERR_LIMITER_OPTION', () =>
    (message as NonNullable<typeof message>)(req, check.decision),
  )
  return { status: rl.statusCode, ...bodyOf(value) }
}

/**
 * {@link limitedResponse} without a promise, when no `message` callback is to be called:
 * `undefined` when one is (then `limitedResponse` calls it).
 */
export function limitedNow<Req>(
  rl: ResolvedRateLimit<Req, unknown>,
  check: RateLimitCheck,
): LimitedResponse | undefined {
  // A denial because the store is down (failureMode 'closed') is the server's fault: 503.
  if (failureOf(check.decision) !== undefined)
    return { status: 503, ...unavailableBody(check.decision) }
  // So is one by a fleet reserve alone (the slots left are kept for higher priorities), or by
  // the `shed` option's shedder (this process is overloaded).
  if (check.decision.reason !== undefined) return { status: 503, ...overloadedBody(check.decision) }
  if (rl.message !== undefined) return undefined
  const status = rl.statusCode
  return { status, ...(rl.messageBody ?? problemBody(status, check.policy, check.decision)) }
}

/**
 * True when an admitted request owes something once it is over: a concurrency lease to release,
 * or a refund to decide under the skip options. False for the usual request, which costs nothing
 * more per request.
 */
export function owesWhenOver<Req>(
  rl: ResolvedRateLimit<Req, unknown>,
  check: RateLimitCheck,
): boolean {
  return (
    check.over !== undefined ||
    (check.decision.allowed &&
      (check.leases ||
        rl.skipSuccessfulRequests ||
        rl.skipFailedRequests ||
        rl.skipAbortedRequests))
  )
}

/**
 * What an admitted request owes once it is over, as a function to call with the final status
 * (`undefined` when the client went away before the response finished); only its first call
 * counts. It refunds the request's cost under `skipSuccessfulRequests` / `skipFailedRequests` /
 * `skipAbortedRequests`, passing the decision, so sliding-log removes exactly this request's
 * entry and a concurrency lease comes back with the refund; otherwise, when the limiter holds a
 * concurrency policy, it releases the lease. `undefined` when nothing is owed (the usual case
 * costs nothing per request).
 */
export function refundOnce<Req>(
  rl: ResolvedRateLimit<Req, unknown>,
  check: RateLimitCheck,
): ((status: number | undefined) => void) | undefined {
  // the Fetch hosts' owedOnce, its promise left to run (it never rejects)
  const owed = owedOnce(rl, check)
  return owed === undefined ? undefined : (status) => void owed(status)
}

/** The part of Node's `ServerResponse` that {@link refundWhenDone} watches. */
export interface FinishTarget extends LifecycleTarget {}

/**
 * Wires {@link refundOnce} to a Node response: what the request owes is settled once it is over,
 * with the final status, or as aborted (`undefined`) when the client left before the response
 * finished. By default a request is over when its handler has ended the response (`res.end`, or
 * {@link handlerDone} for Koa) and the response finished or the client left: a client that hangs
 * up does not free a concurrency slot while its handler still runs. With `releaseOnDisconnect`,
 * at `finish` or as soon as the client leaves. A pipelined response queued on a connection that
 * dies is over by its socket's `close` (see node-lifecycle).
 */
export function refundWhenDone<Req>(
  rl: ResolvedRateLimit<Req, unknown>,
  check: RateLimitCheck,
  res: FinishTarget,
): void {
  const settle = refundOnce(rl, check)
  if (settle !== undefined) settleWhenOver(res, settle, !rl.releaseOnDisconnect)
}

/** The part of Node's `ServerResponse` that {@link whenDue} watches. */
export interface CloseTarget extends FinishTarget {
  removeListener(event: 'finish' | 'close', listener: () => void): unknown
}

/**
 * Goes on with an admitted check: at once, or, when it reserved a later slot (`delayMs`, from
 * `maxDelay`), after one timer. Only then is what the request owes armed ({@link refundWhenDone}):
 * if the client goes away first (the response or its connection closes), the reservation is
 * refunded (and a concurrency lease with it), `go` never runs, and `gone` (if given) does.
 * Returns what `go` returns when it ran at once.
 */
export function whenDue<Req, R>(
  rl: ResolvedRateLimit<Req, unknown>,
  check: RateLimitCheck,
  res: CloseTarget,
  go: () => R,
  gone?: () => void,
): R | undefined {
  const { delayMs } = check.decision
  // a shadow limiter's reservation is counted, but nobody waits for it
  if (delayMs === 0 || check.shadow) return go()
  if (clientGone(res)) {
    giveBack(check, gone)
    return undefined
  }
  const left = (): void => {
    clearTimeout(timer)
    unwatch?.()
    res.removeListener('close', left)
    giveBack(check, gone)
  }
  // a response waiting in a pipeline hears only its socket's close
  const socket = res.socket == null ? res.req?.socket : undefined
  const unwatch = socket == null ? undefined : onSocketClose(socket, left)
  // the timer's callback is shared; the close listener is the one closure per waiting request
  const timer = setTimeout(due, delayMs, rl, check, res, go, left, unwatch)
  res.once('close', left)
  return undefined
}

// A reserved slot's time has come: from now on the request owes what an admitted one does.
function due<Req>(
  rl: ResolvedRateLimit<Req, unknown>,
  check: RateLimitCheck,
  res: CloseTarget,
  go: () => unknown,
  left: () => void,
  unwatch: (() => void) | undefined,
): void {
  res.removeListener('close', left)
  unwatch?.()
  refundWhenDone(rl, check, res)
  go()
}

// A client gone while its request waited: it never ran, so its reservation comes back whatever
// the skip options say (the refund gives back a concurrency lease too).
function giveBack(check: RateLimitCheck, gone: (() => void) | undefined): void {
  void giveBackReservation(check)
  gone?.()
}

/** What an adapter does after {@link settleCheck}. */
export type CheckOutcome = 'proceed' | 'ended' | 'limited'

/**
 * The step every adapter takes after {@link checkRequest}: write the headers into `headers`
 * (merged with what is already there), then for an allowed request answer `'proceed'`: the
 * adapter goes on through {@link whenDue}, which waits out a reserved slot's `delayMs`. What the
 * request owes when it is over (a refund under the skip options, a concurrency lease's release)
 * is armed here, or by `whenDue` once a reserved slot is due. For a limited request answer
 * `'limited'` (the adapter sends `onLimited` or {@link limitedResponse}), or, when the response
 * had already started so no 429 can be sent, end it and answer `'ended'`. `headers` is where the
 * headers go: Node's response itself for Express and Koa.
 */
export function settleCheck<Req>(
  rl: ResolvedRateLimit<Req, unknown>,
  check: RateLimitCheck,
  res: CloseTarget & { readonly headersSent: boolean; end(): unknown },
  headers: Omit<HeaderTarget, 'headersSent'>,
): CheckOutcome {
  const writable = !res.headersSent
  if (writable) writeMerged(headers, check.headers, check)
  // a shadow limiter's refusal goes on too: it was decided and counted, not enforced
  if (check.decision.allowed || check.shadow) {
    if (check.decision.delayMs === 0 || check.shadow) refundWhenDone(rl, check, res)
    return 'proceed'
  }
  if (!writable) {
    res.end()
    return 'ended'
  }
  return 'limited'
}
