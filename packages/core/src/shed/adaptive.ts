// Adaptive concurrency: the in-flight limit learned from latency (a gradient against the
// no-load round trip, after Netflix's Gradient2 and Envoy's adaptive concurrency filter).
import { type Duration, parseDuration } from '../duration.js'
import { publishAdaptive } from './events.js'
import { hooksOf } from './hooks.js'
import { numberIn } from './options.js'

/** Options of {@link createAdaptiveLimit}. */
export interface AdaptiveOptions {
  /** The name events and state report (default `'adaptive'`). */
  readonly name?: string
  /** The floor: the limit never goes below it (default 4). */
  readonly min?: number
  /** The ceiling (default 1000). */
  readonly max?: number
  /** The limit to start from (default 20, within `min` and `max`). */
  readonly initial?: number
  /** The shortest window of samples the limit is updated from (default `'500ms'`). */
  readonly window?: Duration
  /** The fewest samples a window (and a probe) needs (default 20). */
  readonly minSamples?: number
  /**
   * How much slower than the no-load round trip a window may be before the limit shrinks
   * (default 1: any queueing). Raise it (e.g. 1.2) when latency is noisy at no load.
   */
  readonly tolerance?: number
  /** Share of the way to the new limit taken per window, in (0, 1] (default 0.2). */
  readonly smoothing?: number
  /** The queue the limit allows on top of what the gradient leaves (default 4). */
  readonly queueSize?: number
  /** Time between no-load probes, jittered by `probeJitter` (default `'60s'`). */
  readonly probeInterval?: Duration
  /** The probes' jitter, a share of `probeInterval` either way, in [0, 1) (default 0.25). */
  readonly probeJitter?: number
  /** A probe caps in-flight at this share of the limit (never below `min`) (default 0.5). */
  readonly probeRatio?: number
}

/** What an adaptive limit shows of itself. */
export interface AdaptiveState {
  readonly name: string
  /** The learned limit (whole requests). */
  readonly limit: number
  /** What admits now: the limit, or the probe's cap while probing. */
  readonly cap: number
  readonly inflight: number
  /** The no-load round trip the gradient compares against, in ms (undefined before a sample). */
  readonly baselineMs: number | undefined
  /** The mean round trip of the last window, in ms. */
  readonly rttMs: number | undefined
  readonly probing: boolean
}

/** One admitted request: call `done()` when its work ends (idempotent). */
export interface AdaptiveLease {
  done(): void
}

/** An in-flight limit that learns itself from the round trips of what it admits. */
export interface AdaptiveLimit {
  /**
   * Admits one request if in-flight is under the cap, counting it in the same synchronous step
   * (in-flight never exceeds the cap). `force` admits regardless (and still counts).
   */
  tryAcquire(force?: boolean): AdaptiveLease | undefined
  state(): AdaptiveState
}

interface Settings {
  readonly name: string
  readonly min: number
  readonly max: number
  readonly windowMs: number
  readonly minSamples: number
  readonly tolerance: number
  readonly smoothing: number
  readonly queueSize: number
  readonly probeMs: number
  readonly jitter: number
  readonly probeRatio: number
}

function settingsOf(options: AdaptiveOptions): Settings & { readonly initial: number } {
  const big = Number.MAX_SAFE_INTEGER
  const min = numberIn(options.min, 'adaptive.min', 4, 1, big, true)
  const max = numberIn(options.max, 'adaptive.max', Math.max(1000, min), min, big, true)
  return {
    name: options.name ?? 'adaptive',
    min,
    max,
    initial: numberIn(
      options.initial,
      'adaptive.initial',
      Math.min(max, Math.max(min, 20)),
      min,
      max,
    ),
    windowMs: parseDuration(options.window ?? 500, 'adaptive.window'),
    minSamples: numberIn(options.minSamples, 'adaptive.minSamples', 20, 1, big, true),
    tolerance: numberIn(options.tolerance, 'adaptive.tolerance', 1, 1, 10),
    smoothing: numberIn(options.smoothing, 'adaptive.smoothing', 0.2, 0.01, 1),
    queueSize: numberIn(options.queueSize, 'adaptive.queueSize', 4, 0, big),
    probeMs: parseDuration(options.probeInterval ?? 60_000, 'adaptive.probeInterval'),
    jitter: numberIn(options.probeJitter, 'adaptive.probeJitter', 0.25, 0, 0.99),
    probeRatio: numberIn(options.probeRatio, 'adaptive.probeRatio', 0.5, 0.01, 1),
  }
}

/**
 * The next limit from one window: the gradient `tolerance * baseline / rtt`, clamped to
 * [0.5, 1], scales the limit down when round trips grow (queueing), and `queueSize` is added
 * back; at no queueing the limit grows by its square root, unless the window used under half
 * of it (the limit is not what holds traffic back). The step is smoothed.
 */
export function nextLimit(
  s: Settings,
  limit: number,
  rttMs: number,
  baselineMs: number,
  peak: number,
): number {
  const gradient =
    rttMs <= s.tolerance * baselineMs ? 1 : Math.max(0.5, (s.tolerance * baselineMs) / rttMs)
  let target: number
  if (gradient < 1) target = limit * gradient + s.queueSize
  else target = peak * 2 < limit ? limit : limit + Math.sqrt(limit)
  const next = limit + s.smoothing * (target - limit)
  return Math.min(s.max, Math.max(s.min, next))
}

// A window of samples (or a probe's): samples count only if admitted in the same epoch.
interface Window {
  epoch: number
  startMs: number
  sum: number
  count: number
  peak: number
}

class Adaptive implements AdaptiveLimit {
  readonly #s: Settings
  readonly #now: () => number
  readonly #random: () => number
  #limit: number
  #inflight = 0
  #baseline: number | undefined
  #rtt: number | undefined
  #epoch = 0
  #window: Window
  // the probe under way: its cap; its samples are in #window
  #probeCap: number | undefined
  #nextProbeMs: number

  constructor(s: Settings, initial: number, now: () => number, random: () => number) {
    this.#s = s
    this.#now = now
    this.#random = random
    this.#limit = initial
    this.#window = { epoch: 0, startMs: now(), sum: 0, count: 0, peak: 0 }
    // the first requests measure the no-load round trip: a probe from the start
    this.#nextProbeMs = now()
  }

  #cap(): number {
    return this.#probeCap ?? Math.floor(this.#limit)
  }

  tryAcquire(force = false): AdaptiveLease | undefined {
    const now = this.#now()
    if (this.#probeCap === undefined && now >= this.#nextProbeMs) this.#startProbe(now)
    else if (this.#probeCap !== undefined && now - this.#window.startMs > 10 * this.#s.windowMs)
      this.#endProbe(now, false) // traffic too thin to finish the probe: nothing to learn
    if (!force && this.#inflight >= this.#cap()) return undefined
    this.#inflight++
    if (this.#inflight > this.#window.peak) this.#window.peak = this.#inflight
    const epoch = this.#epoch
    let open = true
    return {
      done: () => {
        if (!open) return
        open = false
        this.#inflight--
        this.#sample(epoch, this.#now() - now)
      },
    }
  }

  #sample(epoch: number, rttMs: number): void {
    const w = this.#window
    // a request admitted before a probe started or ended measured other conditions
    if (epoch !== w.epoch) return
    w.sum += rttMs
    w.count++
    if (w.count < this.#s.minSamples) return
    const now = this.#now()
    if (this.#probeCap !== undefined) this.#endProbe(now, true)
    else if (now - w.startMs >= this.#s.windowMs) this.#update(now)
  }

  #startProbe(now: number): void {
    const s = this.#s
    this.#probeCap = Math.max(
      s.min,
      Math.min(Math.floor(this.#limit), Math.ceil(this.#limit * s.probeRatio)),
    )
    this.#newWindow(now)
    this.#publish()
  }

  #endProbe(now: number, learned: boolean): void {
    const w = this.#window
    if (learned) this.#baseline = w.sum / w.count
    this.#probeCap = undefined
    const spread = this.#s.jitter * (2 * this.#random() - 1)
    this.#nextProbeMs = now + this.#s.probeMs * (1 + spread)
    this.#newWindow(now)
    this.#publish()
  }

  #update(now: number): void {
    const w = this.#window
    const rtt = w.sum / w.count
    this.#rtt = rtt
    // between probes the baseline only falls: the lowest window seen
    if (this.#baseline === undefined || rtt < this.#baseline) this.#baseline = rtt
    this.#limit = nextLimit(this.#s, this.#limit, rtt, this.#baseline, w.peak)
    this.#newWindow(now)
    this.#publish()
  }

  #newWindow(now: number): void {
    this.#epoch++
    this.#window = { epoch: this.#epoch, startMs: now, sum: 0, count: 0, peak: this.#inflight }
  }

  #publish(): void {
    publishAdaptive(() => this.state())
  }

  state(): AdaptiveState {
    return {
      name: this.#s.name,
      limit: Math.floor(this.#limit),
      cap: this.#cap(),
      inflight: this.#inflight,
      baselineMs: this.#baseline,
      rttMs: this.#rtt,
      probing: this.#probeCap !== undefined,
    }
  }
}

/**
 * An in-flight limit learned from latency: once per window (at least `window` long and
 * `minSamples` round trips) it compares the window's mean round trip with the no-load round
 * trip and moves the limit within [`min`, `max`]. The no-load round trip is measured by probes,
 * one at the start and then every `probeInterval` (jittered, so processes do not probe
 * together), which cap in-flight at `probeRatio` of the limit (not at `min`: traffic keeps
 * flowing) until `minSamples` requests admitted under the cap have finished.
 *
 * @example
 * const limit = createAdaptiveLimit({ min: 10, max: 500 })
 * const lease = limit.tryAcquire()
 * if (lease === undefined) return refuse()
 * try { await work() } finally { lease.done() }
 */
export function createAdaptiveLimit(options: AdaptiveOptions = {}): AdaptiveLimit {
  const { initial, ...settings } = settingsOf(options)
  const hooks = hooksOf(options)
  return new Adaptive(
    settings,
    initial,
    hooks.now ?? (() => performance.now()),
    hooks.random ?? Math.random,
  )
}
