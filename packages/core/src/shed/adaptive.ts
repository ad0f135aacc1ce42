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

// A done's `waitedMs`: a positive finite number, else 0 (done runs in finally blocks: it never
// throws).
function waitedOf(options: DoneOptions | undefined): number {
  const ms = options?.waitedMs
  return typeof ms === 'number' && Number.isFinite(ms) && ms > 0 ? ms : 0
}

/** How an admitted request ends: see {@link AdaptiveLease.done}. */
export interface DoneOptions {
  /**
   * End it without teaching the limit its round trip (default false): for a request whose
   * round trip measures no service time, such as one a rate limiter refused, one whose checks
   * failed before it ran, or one that failed fast for a reason unrelated to capacity (Netflix's
   * `onIgnore`). It still leaves in-flight.
   */
  readonly ignore?: boolean
  /**
   * Of its round trip, the ms it waited on purpose before its work began (a rate limiter's
   * `maxDelay` slot): not service time, so taken off the sample (default 0; anything but a
   * positive finite number counts as 0).
   */
  readonly waitedMs?: number
}

/**
 * One admitted request: call `done()` when its work ends, and its round trip is a sample of the
 * limit; `done({ ignore: true })` ends it without one. Only the first call counts.
 */
export interface AdaptiveLease {
  done(options?: DoneOptions): void
}

/** An in-flight limit that learns itself from the round trips of what it admits. */
export interface AdaptiveLimit {
  /**
   * Admits one request if in-flight is under the cap, counting it in the same synchronous step
   * (in-flight never exceeds the cap), and, with a `reserve`, if what is admitted without
   * `force` holds less than its share of the cap. `force` admits regardless (and still counts).
   */
  tryAcquire(force?: boolean): AdaptiveLease | undefined
  state(): AdaptiveState
}

// A window of samples: the requests admitted since the last probe that ended in it.
interface Window {
  startMs: number
  sum: number
  count: number
  peak: number
}

// A probe: the first `probeSamples` requests admitted under its cap are tagged, and it ends when
// all of them have ended (not with the first to end: those are the fast ones).
interface Probe {
  readonly cap: number
  readonly startMs: number
  tagged: number
  pending: number
  sum: number
}

class Adaptive implements AdaptiveLimit {
  readonly #s: Settings
  readonly #now: () => number
  readonly #random: () => number
  #limit: number
  #inflight = 0
  // of them, admitted without `force`
  #shared = 0
  #baseline: number | undefined
  #rtt: number | undefined
  // a request counts only in the epoch it was admitted in: a probe's start and end change it
  #epoch = 0
  #window: Window
  #probe: Probe | undefined
  #nextProbeMs: number
  #baselineGuessed = false

  constructor(s: Settings, initial: number, now: () => number, random: () => number) {
    this.#s = s
    this.#now = now
    this.#random = random
    this.#limit = initial
    this.#window = { startMs: now(), sum: 0, count: 0, peak: 0 }
    // the first requests measure the no-load round trip: a probe from the start
    this.#nextProbeMs = now()
  }

  #cap(): number {
    return this.#probe?.cap ?? Math.floor(this.#limit)
  }

  tryAcquire(force = false): AdaptiveLease | undefined {
    const now = this.#now()
    const probe = this.#probe
    if (probe === undefined && now >= this.#nextProbeMs) this.#startProbe(now)
    // traffic too thin to finish the probe, or a request that never ends: nothing learned
    else if (probe !== undefined && now - probe.startMs > this.#probeTimeoutMs(probe))
      this.#endProbe(now)
    if (!force && !this.#room()) return undefined
    this.#inflight++
    if (!force) this.#shared++
    if (this.#inflight > this.#window.peak) this.#window.peak = this.#inflight
    const epoch = this.#epoch
    const tagged = this.#probe !== undefined && this.#probe.tagged < this.#s.probeSamples
    if (tagged) {
      const p = this.#probe as Probe
      p.tagged++
      p.pending++
    }
    let open = true
    return {
      done: (options) => {
        if (!open) return
        open = false
        this.#inflight--
        if (!force) this.#shared--
        if (epoch !== this.#epoch) return // admitted before a probe started or ended
        const probe = this.#probe
        if (options?.ignore === true) {
          // no sample: a tagged request gives its tag back, for the probe to measure another
          if (tagged && probe !== undefined) {
            probe.tagged--
            probe.pending--
          }
          return
        }
        const rttMs = Math.max(0, this.#now() - now - waitedOf(options))
        if (probe === undefined) this.#sample(rttMs)
        else if (tagged) this.#probeSample(probe, rttMs)
      },
    }
  }

  // Whether a request without `force` fits: under the cap, and under its share of it.
  #room(): boolean {
    const cap = this.#cap()
    const share = Math.max(1, Math.floor(cap * (1 - this.#s.reserve)))
    return this.#inflight < cap && this.#shared < share
  }

  #sample(rttMs: number): void {
    const w = this.#window
    w.sum += rttMs
    w.count++
    const now = this.#now()
    if (w.count >= this.#s.minSamples && now - w.startMs >= this.#s.windowMs) this.#update(now)
  }

  #probeSample(p: Probe, rttMs: number): void {
    p.sum += rttMs
    p.pending--
    if (p.pending > 0 || p.tagged < this.#s.probeSamples) return
    this.#baseline = p.sum / p.tagged
    this.#baselineGuessed = false
    this.#endProbe(this.#now())
  }

  // Ten windows, or three times what the probe's requests take at its cap if that is longer
  // (a slow service's probe needs several rounds of round trips).
  #probeTimeoutMs(p: Probe): number {
    const rttMs = this.#baseline ?? this.#rtt ?? this.#s.windowMs
    return Math.max(10 * this.#s.windowMs, (3 * rttMs * this.#s.probeSamples) / p.cap)
  }

  #startProbe(now: number): void {
    const s = this.#s
    const cap = Math.max(
      s.min,
      Math.min(Math.floor(this.#limit), Math.ceil(this.#limit * s.probeRatio)),
    )
    this.#probe = { cap, startMs: now, tagged: 0, pending: 0, sum: 0 }
    this.#epoch++
    this.#publish()
  }

  #endProbe(now: number): void {
    this.#probe = undefined
    const spread = this.#s.jitter * (2 * this.#random() - 1)
    this.#nextProbeMs = now + this.#s.probeMs * (1 + spread)
    this.#epoch++
    this.#newWindow(now)
    this.#publish()
  }

  #update(now: number): void {
    const w = this.#window
    const rtt = w.sum / w.count
    this.#rtt = rtt
    // no probe has finished yet (traffic too thin): the fastest window is the best guess
    if (this.#baseline === undefined || (this.#baselineGuessed && rtt < this.#baseline)) {
      this.#baseline = rtt
      this.#baselineGuessed = true
    }
    this.#limit = nextLimit(this.#s, this.#limit, rtt, this.#baseline, w.peak)
    this.#newWindow(now)
    this.#publish()
  }

  #newWindow(now: number): void {
    this.#window = { startMs: now, sum: 0, count: 0, peak: this.#inflight }
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
      probing: this.#probe !== undefined,
    }
  }
}

/**
 * An in-flight limit learned from latency: once per window (at least `window` long and
 * `minSamples` round trips) it compares the window's mean round trip with the no-load round
 * trip and moves the limit within [`min`, `max`]. The no-load round trip is measured by probes,
 * one at the start and then every `probeInterval` (jittered, so processes do not probe
 * together), which cap in-flight at `probeRatio` of the limit (not at `min`: traffic keeps
 * flowing) until the first `probeSamples` requests admitted under the cap have all ended.
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
