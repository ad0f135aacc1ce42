// Shedding before the framework: a Node request listener that asks a shedder first and answers
// a shed request itself, so a refusal costs Node's HTTP parsing and none of the framework's
// routing, middleware and response helpers (measured in BENCHMARKS.md: about 16 µs of server
// CPU per refusal against 100-140 µs through an Express middleware).

import type { IncomingMessage, ServerResponse } from 'node:http'
import { LimiterTypeError } from '../common/errors.js'
import { knownOptions, NO_HINTS } from '../common/option-names.js'
import { doneOptionsOf } from '../shed/done-options.js'
import { type Priority, priorityRank } from '../shed/priority.js'
import type { Shedder } from '../shed/types.js'
import { retryAfterSeconds } from './headers.js'
import { overloadedBody, PROBLEM_JSON } from './problem.js'
import { queueOptions, ShedQueue, type ShedQueueOptions } from './shed-queue.js'

export type { ShedQueueOptions } from './shed-queue.js'

/** Options of {@link shedFirst}. */
export interface ShedFirstOptions {
  /**
   * The request's class: a {@link Priority}, or a function of the request returning one,
   * called once per request, synchronously, before the framework has seen it (read headers,
   * the method and the URL; there is no parsed body or route yet). Default `'normal'`.
   */
  readonly priority?: Priority | ((req: IncomingMessage) => Priority)
  /**
   * Critical first within the process (default off). `true` or `{ maxWait, maxSize }`: a
   * critical request runs at once, as without it; an admitted request of any other class waits
   * in a FIFO of its class and runs at the next check phase of the event loop, most important
   * class first, about a millisecond of loop time at a time, so a critical request read in the
   * meantime runs before the queued ones. One that waited more than `maxWait` (default
   * `'100ms'`) is answered 503 with `Retry-After` when its turn comes (shed, signal `'queue'`);
   * one whose client hung up never runs. Pays off on a busy CPU-bound server, where one event
   * loop otherwise runs requests in the order it reads them; it costs one `setImmediate` turn
   * per batch of requests (a few µs) and, for non-critical requests, the wait behind the
   * critical ones.
   */
  readonly queue?: boolean | ShedQueueOptions
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

const SHED_FIRST_OPTIONS: ReadonlySet<string> = new Set(['priority', 'queue'])

// The queue of `options`, if asked for, after checking the arguments.
function checked(shedder: Shedder, listener: RequestListener, options: ShedFirstOptions) {
  if (typeof shedder !== 'object' || shedder === null || typeof shedder.admit !== 'function')
    throw new LimiterTypeError('shedder', shedder, 'a shedder from createShedder()')
  if (typeof listener !== 'function')
    throw new LimiterTypeError('listener', listener, 'a request listener (req, res) => void')
  if (typeof options !== 'object' || options === null)
    throw new LimiterTypeError('options', options, 'an object of shedFirst options')
  knownOptions(options, SHED_FIRST_OPTIONS, '', NO_HINTS)
  const { priority } = options
  if (typeof priority !== 'function') priorityRank(priority, 'priority')
  const queue = queueOptions(options.queue)
  if (queue === undefined) return undefined
  if (typeof shedder.refuse !== 'function')
    throw new LimiterTypeError('shedder', shedder, 'a shedder from createShedder() (with refuse)')
  return new ShedQueue(shedder, listener, refuse, queue)
}

/**
 * Wraps a Node request listener (an Express or Koa app's handler, Fastify's `serverFactory`
 * handler) so that `shedder` is asked first: a shed request gets **503** with `Retry-After` and
 * a problem document from here and never reaches the framework; an admitted one goes on, and
 * its admission ends when the response closes (a response closed with 429 or 503 is a refusal
 * further on, and its round trip teaches an adaptive limit nothing). A `priority` function
 * that throws (or returns something that is not a priority) lets the request through unshed
 * and emits one warning. With `queue`, admitted requests below critical wait their turn,
 * critical first, and one that waited too long is refused (see {@link ShedFirstOptions.queue});
 * without it, every admitted request goes on at once, in the order Node read it.
 *
 * @example
 * const shedder = createShedder({ thresholds: { elu: 0.95 } })
 * const priority = (req) => (req.url?.startsWith('/pay') ? 'critical' : 'low')
 * http.createServer(shedFirst(shedder, app, { priority, queue: true })).listen(3000)
 */
export function shedFirst(
  shedder: Shedder,
  listener: RequestListener,
  options: ShedFirstOptions = {},
): (req: IncomingMessage, res: ServerResponse) => void {
  const queue = checked(shedder, listener, options)
  const { priority } = options
  let warned = false
  return (req, res) => {
    let admission: ReturnType<Shedder['admit']>
    let rank: number
    try {
      rank = priorityRank(typeof priority === 'function' ? priority(req) : priority)
      admission = shedder.admit(rank)
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
    // a 429 or 503 from the framework is a refusal: it teaches the adaptive limit nothing
    res.once('close', () => admission.done(doneOptionsOf(res.statusCode)))
    if (queue !== undefined && rank > 0) queue.add(req, res, rank, admission)
    else listener(req, res)
  }
}
