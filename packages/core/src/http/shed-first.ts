// Shedding before the framework: a Node request listener that asks a shedder first and answers
// a shed request itself, so a refusal costs Node's HTTP parsing and none of the framework's
// routing, middleware and response helpers (measured in BENCHMARKS.md: about 16 µs of server
// CPU per refusal against 100-140 µs through an Express middleware).
import type { IncomingMessage, ServerResponse } from 'node:http'
import { LimiterTypeError } from '../common/errors.js'
import { type Priority, priorityRank } from '../shed/priority.js'
import type { Shedder } from '../shed/types.js'
import { retryAfterSeconds } from './headers.js'
import { overloadedBody, PROBLEM_JSON } from './problem.js'

/** Options of {@link shedFirst}. */
export interface ShedFirstOptions {
  /**
   * The request's class: a {@link Priority}, or a function of the request returning one,
   * called once per request, synchronously, before the framework has seen it (read headers,
   * the method and the URL; there is no parsed body or route yet). Default `'normal'`.
   */
  readonly priority?: Priority | ((req: IncomingMessage) => Priority)
}

/** A Node request listener, as `http.createServer` takes. */
export type RequestListener = (req: IncomingMessage, res: ServerResponse) => unknown

// The 503 by Retry-After seconds: a handful of values, each built once, headers and body. With
// `Content-Length` Node sends the body as it is, not in chunked encoding (as it would after
// `writeHead` without one): fewer bytes and less work for both ends.
interface Refusal {
  readonly headers: readonly string[]
  readonly body: string
}
const refusals = new Map<number, Refusal>()
function refusalOf(seconds: number): Refusal {
  let refusal = refusals.get(seconds)
  if (refusal === undefined) {
    const { body } = overloadedBody({ retryAfterMs: seconds * 1000 })
    const headers = [
      'content-type',
      PROBLEM_JSON,
      'content-length',
      String(Buffer.byteLength(body)),
      'retry-after',
      String(seconds),
      'cache-control',
      'no-store',
    ]
    refusal = { headers, body }
    if (refusals.size < 64) refusals.set(seconds, refusal)
  }
  return refusal
}

function refuse(res: ServerResponse, retryAfterMs: number): void {
  const { headers, body } = refusalOf(retryAfterSeconds({ retryAfterMs }))
  res.writeHead(503, headers as string[])
  res.end(body)
}

function checked(shedder: Shedder, listener: unknown, priority: ShedFirstOptions['priority']) {
  if (typeof shedder !== 'object' || shedder === null || typeof shedder.admit !== 'function')
    throw new LimiterTypeError('shedder', shedder, 'a shedder from createShedder()')
  if (typeof listener !== 'function')
    throw new LimiterTypeError('listener', listener, 'a request listener (req, res) => void')
  if (typeof priority !== 'function') priorityRank(priority, 'priority')
}

/**
 * Wraps a Node request listener (an Express or Koa app's handler, Fastify's `serverFactory`
 * handler) so that `shedder` is asked first: a shed request gets **503** with `Retry-After` and
 * a problem document from here and never reaches the framework; an admitted one goes on, and
 * its admission ends when the response closes. A `priority` function that throws (or returns
 * something that is not a priority) lets the request through unshed and emits one warning.
 *
 * @example
 * const shedder = createShedder({ thresholds: { elu: 0.95 } })
 * const priority = (req) => (req.url?.startsWith('/pay') ? 'critical' : 'low')
 * http.createServer(shedFirst(shedder, app, { priority })).listen(3000)
 */
export function shedFirst(
  shedder: Shedder,
  listener: RequestListener,
  options: ShedFirstOptions = {},
): (req: IncomingMessage, res: ServerResponse) => void {
  const { priority } = options
  checked(shedder, listener, priority)
  let warned = false
  return (req, res) => {
    let admission: ReturnType<Shedder['admit']>
    try {
      admission = shedder.admit(typeof priority === 'function' ? priority(req) : priority)
    } catch (error) {
      if (!warned) {
        warned = true
        process.emitWarning(
          `shedFirst: the priority of a request failed, so it was not shed: ${String(error)}`,
          'LimiterWarning',
        )
      }
      listener(req, res)
      return
    }
    if (!admission.admitted) {
      refuse(res, admission.retryAfterMs)
      return
    }
    res.once('close', admission.done)
    listener(req, res)
  }
}
