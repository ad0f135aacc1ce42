// shedFirst's queue: admitted requests below critical wait in a FIFO per class and run most
// important class first, about a millisecond of loop time at a time, so that a critical request
// read in between runs before the next queued one; a request that has waited too long is
// refused instead (CoDel's idea: time in the queue is the signal).
import type { IncomingMessage, ServerResponse } from 'node:http'

import { type Duration, MAX_TIMER_MS, parseDuration } from '../common/duration.js'
import { LimiterTypeError } from '../common/errors.js'
import { knownOptions, NO_HINTS } from '../common/option-names.js'
import { IGNORE } from '../shed/done-options.js'
import { numberIn } from '../shed/number-option.js'
import { priorityName } from '../shed/priority.js'
import type { ShedAdmitted, Shedder } from '../shed/types.js'

/** The `queue` option of `shedFirst`. */
export interface ShedQueueOptions {
  /**
   * How long an admitted request may wait for its turn: past it, the request is refused when
   * its turn comes (503 with `Retry-After`, counted and published as shed with signal
   * `'queue'`), and its admission ends. Default `'100ms'`.
   */
  readonly maxWait?: Duration
  /**
   * The most requests waiting, all classes together; one more is refused at once, as a stale
   * one is (default 1000).
   */
  readonly maxSize?: number
}

/** Loop time one drain spends running queued requests before it yields to the poll phase. */
const SLICE_MS = 1

interface Waiting {
  readonly req: IncomingMessage
  readonly res: ServerResponse
  readonly rank: number
  readonly admission: ShedAdmitted
  readonly sinceMs: number
}

// A FIFO with a moving head: shift() in O(1), compacted once half of it is spent.
class Fifo {
  #items: (Waiting | undefined)[] = []
  #head = 0
  push(item: Waiting): void {
    this.#items.push(item)
  }
  shift(): Waiting | undefined {
    const item = this.#items[this.#head]
    if (item === undefined) return undefined
    this.#items[this.#head++] = undefined
    if (this.#head >= 1024 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head)
      this.#head = 0
    }
    return item
  }
}

/** The `queue` option, checked, in ms. */
export interface QueueLimits {
  readonly maxWaitMs: number
  readonly maxSize: number
}

const QUEUE_OPTIONS: ReadonlySet<string> = new Set(['maxWait', 'maxSize'])

/** The checked `queue` option: `undefined` when off. */
export function queueOptions(queue: unknown): QueueLimits | undefined {
  if (queue === undefined || queue === false) return undefined
  if (queue !== true && (typeof queue !== 'object' || queue === null))
    throw new LimiterTypeError('queue', queue, 'true, false or an object { maxWait, maxSize }')
  const { maxWait, maxSize }: ShedQueueOptions =
    queue === true ? {} : knownOptions(queue, QUEUE_OPTIONS, 'queue.', NO_HINTS)
  return {
    maxWaitMs: parseDuration(maxWait ?? 100, 'queue.maxWait', MAX_TIMER_MS),
    maxSize: numberIn(maxSize, 'queue.maxSize', 1000, 1, Number.MAX_SAFE_INTEGER, true),
  }
}

/** Answers a refused request with 503 and `Retry-After` (shedFirst's cached refusal). */
export type Refuse = (res: ServerResponse, retryAfterMs: number) => void

/** The queue: `add` takes an admitted request below critical, and runs it in its turn. */
export class ShedQueue {
  readonly #shedder: Shedder
  readonly #listener: (req: IncomingMessage, res: ServerResponse) => unknown
  readonly #refuse: Refuse
  readonly #maxWaitMs: number
  readonly #maxSize: number
  // the FIFOs by rank, and their ranks ascending (most important first)
  readonly #fifos = new Map<number, Fifo>()
  #ranks: number[] = []
  #size = 0
  #scheduled = false

  constructor(
    shedder: Shedder,
    listener: (req: IncomingMessage, res: ServerResponse) => unknown,
    refuse: Refuse,
    limits: QueueLimits,
  ) {
    this.#shedder = shedder
    this.#listener = listener
    this.#refuse = refuse
    this.#maxWaitMs = limits.maxWaitMs
    this.#maxSize = limits.maxSize
  }

  /** Queues an admitted request of `rank` (above 0), or refuses it when the queue is full. */
  add(req: IncomingMessage, res: ServerResponse, rank: number, admission: ShedAdmitted): void {
    const waiting: Waiting = { req, res, rank, admission, sinceMs: performance.now() }
    if (this.#size >= this.#maxSize) {
      // in shadow mode it runs now, out of turn: the queue stays bounded
      if (!this.#refused(waiting)) this.#listener(req, res)
      return
    }
    this.#fifoOf(rank).push(waiting)
    this.#size++
    if (!this.#scheduled) {
      this.#scheduled = true
      setImmediate(this.#drain)
    }
  }

  #fifoOf(rank: number): Fifo {
    let fifo = this.#fifos.get(rank)
    if (fifo === undefined) {
      fifo = new Fifo()
      this.#fifos.set(rank, fifo)
      this.#ranks = [...this.#ranks, rank].sort((a, b) => a - b)
    }
    return fifo
  }

  // The oldest request of the most important class waiting.
  #next(): Waiting | undefined {
    for (const rank of this.#ranks) {
      const waiting = this.#fifos.get(rank)?.shift()
      if (waiting !== undefined) {
        this.#size--
        return waiting
      }
    }
    return undefined
  }

  // Runs queued requests for a slice of loop time, then yields (the poll phase reads what came
  // in meanwhile, and a critical request among it runs before the next queued one). A throwing
  // listener throws from here, as it would from the server's 'request' event; what is left
  // still runs, from the next drain.
  readonly #drain = (): void => {
    this.#scheduled = false
    const startMs = performance.now()
    try {
      let waiting = this.#next()
      while (waiting !== undefined) {
        this.#run(waiting)
        if (performance.now() - startMs >= SLICE_MS) break
        waiting = this.#next()
      }
    } finally {
      if (this.#size > 0 && !this.#scheduled) {
        this.#scheduled = true
        setImmediate(this.#drain)
      }
    }
  }

  #run(waiting: Waiting): void {
    const { req, res, admission } = waiting
    // the client hung up while it waited: nobody to answer, the admission ends (it never ran:
    // its wait teaches the adaptive limit nothing)
    if (res.destroyed || req.socket.destroyed) {
      admission.done(IGNORE)
      return
    }
    if (performance.now() - waiting.sinceMs > this.#maxWaitMs && this.#refused(waiting)) return
    this.#listener(req, res)
  }

  // Refuses `waiting` as shed by the queue; false in shadow mode (counted, and it goes on).
  #refused(waiting: Waiting): boolean {
    const refusal = this.#shedder.refuse(priorityName(waiting.rank), 'queue')
    if (refusal === undefined) return false
    waiting.admission.done(IGNORE)
    this.#refuse(waiting.res, refusal.retryAfterMs)
    return true
  }
}
