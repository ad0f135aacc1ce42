// Adaptive concurrency: the in-flight limit learned from latency (a gradient against the
// no-load round trip, after Netflix's Gradient2 and Envoy's adaptive concurrency filter).
import { publishAdaptive } from './events.js'
import { type AdaptiveOptions, nextLimit, type Settings, settingsOf } from './gradient.js'
import { hooksOf } from './hooks.js'

export type { AdaptiveOptions } from './gradient.js'

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

/** Published on `limiter:adaptive` when an adaptive limit updates, or starts or ends a probe. */
export type AdaptiveEvent = AdaptiveState

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
