// The shedder's public types: options, decisions, state.
import type { Duration } from '../common/duration.js'
import type { AdaptiveOptions, AdaptiveState, DoneOptions } from './adaptive.js'
import type { Priority } from './priority.js'
import type { ProcessReading, ShedSignal } from './signals.js'

/** Where each signal turns to overload (over the value, not at it); `false` ignores it. */
export interface ShedThresholds {
  /** Event-loop utilization over the interval, 0 to 1 (default 0.9). */
  readonly elu?: number | false
  /** The interval's p99 event-loop delay (default `'200ms'`). */
  readonly delay?: Duration | false
  /** Requests admitted and not yet done (default `false`). */
  readonly inflight?: number | false
  /** The longest a request has been in this process since `admit` (default `false`). */
  readonly queue?: Duration | false
  /** Heap in use, in bytes (default `false`). */
  readonly heap?: number | false
}

/** Options of {@link createShedder}. */
export interface ShedderOptions {
  /** The name events and state report (default `'shedder'`). */
  readonly name?: string
  /** How often the signals are read, each over the interval just ended (default `'1s'`). */
  readonly interval?: Duration
  /**
   * Intervals in a row with every signal under its recovery band before one step of shedding
   * is undone (default 5).
   */
  readonly recovery?: number
  /**
   * The steps each class is shed in, 1 to 100 (default 1: a class at a time). With 10, a rise
   * sheds a tenth of the class (every tenth request), then two tenths more, four..., so a
   * server with few classes keeps the share of a class it can serve. Where the direction
   * turns (a fall that overshot), the step halves, down to about a `steps`-th of a step.
   */
  readonly steps?: number
  /**
   * How far under its threshold a signal must fall, as a share of it, for an interval to count
   * as quiet (default 0.1: under 0.81 for an `elu` threshold of 0.9). In between, the shedding
   * holds: neither more nor less.
   */
  readonly recoveryBand?: number
  readonly thresholds?: ShedThresholds
  /** `'shadow'` counts and publishes what it would shed, and admits it (default `'enforce'`). */
  readonly mode?: 'enforce' | 'shadow'
  /** Also cap in-flight at a limit learned from latency (see `createAdaptiveLimit`). */
  readonly adaptive?: AdaptiveOptions | false
}

/**
 * An admitted request: call `done()` when its work ends, and with `adaptive` its round trip
 * teaches the limit; call `done({ ignore: true })` instead for one that never reached the work
 * (refused by a rate limiter after the shedder, failed in its checks, refused by a queue of
 * your own) or failed fast for a reason unrelated to capacity, so that its short round trip
 * does not pull the limit up. Only the first call counts.
 */
export interface ShedAdmitted {
  readonly admitted: true
  done(options?: DoneOptions): void
}

/** A refused request: answer 503 with `Retry-After`. */
export interface ShedRefused {
  readonly admitted: false
  /** When the class may be admitted again if the load drops now, in ms. */
  readonly retryAfterMs: number
  /** What is over: the signal that shed the class, or `'inflight'` for the adaptive limit. */
  readonly signal: ShedSignal
  readonly priority: Priority
}

/** What the shedder last read: the process's signals and its own in-flight requests. */
export interface ShedReading extends ProcessReading {
  readonly inflight: number
  /** The longest a request took or has been taking since `admit`, over the interval, in ms. */
  readonly queueMs: number
}

/** What a shedder shows of itself. */
export interface ShedderState {
  readonly name: string
  readonly mode: 'enforce' | 'shadow'
  /** The classes refused now, in full or in part, most important first. */
  readonly shedding: readonly Priority[]
  /**
   * How many classes are shed, counted from the least important class with traffic: 1.5 is all
   * of one and half the next.
   */
  readonly level: number
  /** The signal over at the last interval, or `null`. */
  readonly over: ShedSignal | null
  /** The last interval's reading (undefined before the first interval ends). */
  readonly reading: ShedReading | undefined
  /** Intervals in a row with every signal under its recovery band. */
  readonly quietIntervals: number
  readonly inflight: number
  /** Requests refused since the start (in shadow mode: that would have been). */
  readonly shed: number
  readonly adaptive: AdaptiveState | undefined
}

/** Keeps the process up under overload: see {@link createShedder}. */
export interface Shedder {
  /** Admits or refuses one request of class `priority` (default `'normal'`). */
  admit(priority?: Priority): ShedAdmitted | ShedRefused
  /**
   * Refuses a request this shedder admitted, after the fact: for a caller that holds admitted
   * requests in a queue of its own and finds one waited too long (as `shedFirst` does with
   * `queue`, with signal `'queue'`). It counts in `state().shed` and is published like a refusal
   * from `admit`; the caller still ends the admission, with `done({ ignore: true })` (it never
   * ran: its round trip teaches the adaptive limit nothing). Returns the refusal to answer
   * with, or `undefined` in shadow mode (counted and published; let the request go on).
   */
  refuse(priority: Priority | undefined, signal: ShedSignal): ShedRefused | undefined
  state(): ShedderState
  /** Stops reading signals (a closed shedder sheds nothing). Idempotent. */
  close(): void
}
