// The process shedder: refuses the least important requests first while the process is
// overloaded, judged per interval from the event loop, the heap and its own in-flight requests.
import { MAX_TIMER_MS, parseDuration } from '../common/duration.js'
import { LimiterTypeError } from '../common/errors.js'
import {
  type AdaptiveLease,
  type AdaptiveLimit,
  type AdaptiveOptions,
  createAdaptiveLimit,
} from './adaptive.js'
import { publishShed } from './events.js'
import { hooksOf, SHED_HOOKS } from './hooks.js'
import { Ladder } from './ladder.js'
import { numberIn } from './number-option.js'
import {
  checkMode,
  checkName,
  farOver,
  inBand,
  type Limits,
  limitsOf,
  overOf,
  shedderOptions,
} from './options.js'
import { type Priority, priorityName, priorityRank } from './priority.js'
import { checkSignal, processSignals, type ShedSignal, type SignalSource } from './signals.js'
import type {
  ShedAdmitted,
  Shedder,
  ShedderOptions,
  ShedderState,
  ShedReading,
  ShedRefused,
} from './types.js'

function checkAdaptive(adaptive: unknown): AdaptiveOptions | undefined {
  if (adaptive === undefined || adaptive === false) return undefined
  if (typeof adaptive !== 'object' || adaptive === null)
    throw new LimiterTypeError('adaptive', adaptive, 'an object of adaptive limit options or false')
  return adaptive as AdaptiveOptions
}

const ticks = new WeakMap<Shedder, () => void>()

/** Ends one interval of a shedder made with manual test hooks (tests only). */
export function tickShedder(shedder: Shedder): void {
  ticks.get(shedder)?.()
}

// the in-flight requests, oldest first (a Set keeps insertion order through deletions)
interface Entry {
  readonly startMs: number
}

class ProcessShedder implements Shedder {
  readonly #name: string
  readonly #mode: 'enforce' | 'shadow'
  readonly #intervalMs: number
  readonly #limits: Limits
  readonly #ladder: Ladder
  readonly #band: number
  readonly #adaptive: AdaptiveLimit | undefined
  readonly #now: () => number
  readonly #source: SignalSource
  readonly #timer: ReturnType<typeof setInterval> | undefined
  readonly #entries = new Set<Entry>()
  // the longest a request done this interval took, in ms
  #doneMaxMs = 0
  #over: ShedSignal | undefined
  // the signal that shed the most recently shed class
  #cause: ShedSignal = 'elu'
  #reading: ShedReading | undefined
  #shed = 0
  #closed = false

  constructor(options: ShedderOptions) {
    this.#name = checkName(options.name)
    this.#mode = checkMode(options.mode)
    this.#intervalMs = parseDuration(options.interval ?? 1000, 'interval', MAX_TIMER_MS)
    this.#ladder = new Ladder(
      numberIn(options.recovery, 'recovery', 5, 1, 1_000_000, true),
      numberIn(options.steps, 'steps', 1, 1, 100, true),
    )
    this.#band = numberIn(options.recoveryBand, 'recoveryBand', 0.1, 0, 0.99)
    this.#limits = limitsOf(options.thresholds)
    const hooks = hooksOf(options)
    const adaptive = checkAdaptive(options.adaptive)
    this.#adaptive =
      adaptive === undefined
        ? undefined
        : createAdaptiveLimit({
            name: this.#name,
            ...adaptive,
            [SHED_HOOKS]: hooks,
          } as AdaptiveOptions)
    this.#now = hooks.now ?? (() => performance.now())
    this.#source = hooks.signals ?? processSignals(this.#limits.heap !== undefined)
    if (hooks.manual === true) {
      ticks.set(this, () => this.#tick())
    } else {
      this.#timer = setInterval(() => this.#tick(), this.#intervalMs)
      this.#timer.unref()
    }
  }

  #tick(): void {
    if (this.#closed) return
    const now = this.#now()
    const oldest = this.#entries.values().next()
    const waitingMs = oldest.done === true ? 0 : now - oldest.value.startMs
    const reading: ShedReading = {
      ...this.#source.read(),
      inflight: this.#entries.size,
      queueMs: Math.max(this.#doneMaxMs, waitingMs),
    }
    this.#doneMaxMs = 0
    this.#reading = reading
    const over = overOf(this.#limits, reading)
    this.#over = over
    const limits = this.#limits
    const pressure =
      over === undefined
        ? inBand(limits, reading, this.#band)
          ? 'band'
          : 'under'
        : farOver(limits, reading)
          ? 'far'
          : 'over'
    if (this.#ladder.step(pressure) === 'up' && over !== undefined) this.#cause = over
  }

  admit(priority?: Priority): ShedAdmitted | ShedRefused {
    const rank = priorityRank(priority)
    // a closed shedder sheds nothing: its adaptive limit is not asked either (before, it still
    // refused past that limit, an in-flight count nothing would lower again)
    if (this.#closed) return this.#enter(undefined)
    this.#ladder.see(rank)
    const shadow = this.#mode === 'shadow'
    const laddered = this.#ladder.sheds(rank)
    let signal: ShedSignal | undefined = laddered ? this.#cause : undefined
    let lease: AdaptiveLease | undefined
    const adaptive = this.#adaptive
    if (adaptive !== undefined && (signal === undefined || shadow)) {
      // critical (rank 0) passes the adaptive limit, and counts in it
      lease = adaptive.tryAcquire(rank === 0)
      if (lease === undefined) {
        signal ??= 'inflight'
        // in shadow mode what is admitted anyway counts, and its latency teaches the limit
        if (shadow) lease = adaptive.tryAcquire(true)
      }
    }
    if (signal !== undefined) {
      const refused = this.#refused(rank, signal, laddered)
      if (refused !== undefined) return refused
    }
    return this.#enter(lease)
  }

  refuse(priority: Priority | undefined, signal: ShedSignal): ShedRefused | undefined {
    const rank = priorityRank(priority)
    return this.#refused(rank, checkSignal(signal), this.#ladder.share(rank) > 0)
  }

  // Counts and publishes a shed of `rank` by `signal`: the refusal, or undefined in shadow mode.
  // Retry-After: while the ramp sheds the class (`laddered`), until it admits it again; else
  // the next interval.
  #refused(rank: number, signal: ShedSignal, laddered: boolean): ShedRefused | undefined {
    this.#shed++
    const shadow = this.#mode === 'shadow'
    const priority = priorityName(rank)
    publishShed(this.#name, priority, signal, shadow)
    if (shadow) return undefined
    const intervals = laddered ? this.#ladder.intervalsUntilAdmitted(rank) : 1
    return { admitted: false, retryAfterMs: intervals * this.#intervalMs, signal, priority }
  }

  #enter(lease: AdaptiveLease | undefined): ShedAdmitted {
    const entry: Entry = { startMs: this.#now() }
    this.#entries.add(entry)
    let open = true
    return {
      admitted: true,
      done: (options) => {
        if (!open) return
        open = false
        this.#entries.delete(entry)
        // the time in the process counts for the queue signal, ignored or not
        const tookMs = this.#now() - entry.startMs
        if (tookMs > this.#doneMaxMs) this.#doneMaxMs = tookMs
        lease?.done(options)
      },
    }
  }

  state(): ShedderState {
    return {
      name: this.#name,
      mode: this.#mode,
      shedding: this.#ladder.shed().map(priorityName),
      level: this.#ladder.level(),
      over: this.#over ?? null,
      reading: this.#reading,
      quietIntervals: this.#ladder.quiet,
      inflight: this.#entries.size,
      shed: this.#shed,
      adaptive: this.#adaptive?.state(),
    }
  }

  close(): void {
    if (this.#closed) return
    this.#closed = true
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#source.close()
    this.#ladder.closed = true
  }
}

/**
 * A process shedder: once per `interval` it reads event-loop utilization and p99 delay over
 * that interval (and, when given thresholds, in-flight requests, the longest a request has been
 * in the process, and heap in use). After two intervals in a row with a signal over, it sheds
 * the least important class still admitted (or, with `steps`, the next `1/steps` of it, then
 * twice as much at each further rise while the signal stays over); shed requests come back
 * only after `recovery` intervals in a row with every signal under its recovery band (a share
 * `recoveryBand` under its threshold), one step per quiet period; in the band it holds. Where
 * the direction turns, the step halves (see `Ladder`), so it settles between two steps.
 * `'critical'` is never shed. With `adaptive`, in-flight is also capped at a limit learned from
 * the round trips of what it admits (critical requests pass, and count; with `reserve`, the
 * other classes hold at most the rest of it).
 *
 * @example
 * const shedder = createShedder({ thresholds: { elu: 0.9, delay: '200ms' } })
 * const admission = shedder.admit('low')
 * if (!admission.admitted) return respond503(admission.retryAfterMs)
 * res.on('close', () => admission.done({ ignore: res.statusCode === 429 }))
 */
export function createShedder(options: ShedderOptions = {}): Shedder {
  if (typeof options !== 'object' || options === null)
    throw new LimiterTypeError('options', options, 'an object of shedder options')
  return new ProcessShedder(shedderOptions(options))
}
