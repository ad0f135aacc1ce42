// The adaptive limit's options and its update rule: a pure function of one window of samples.
import { type Duration, parseDuration } from '../common/duration.js'
import { LimiterTypeError } from '../common/errors.js'
import { knownOptions, type ScopeHints } from '../common/option-names.js'
import { numberIn } from './number-option.js'

/** Options of `createAdaptiveLimit` (and of a shedder's `adaptive`). */
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
  /** The fewest samples a window needs (default 20). */
  readonly minSamples?: number
  /**
   * The requests a probe measures (default 100): the no-load round trip is their mean, and a
   * few percent of error in it moves the limit as much as that much queueing would.
   */
  readonly probeSamples?: number
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
  /**
   * The share of the cap kept for requests admitted with `force` (a shedder's critical ones),
   * in [0, 1) (default 0): the others together hold at most the rest (never under 1). In a
   * FIFO downstream, what less important requests hold is the queue a critical one waits
   * behind; with 0.3 and a cap of 10, they hold 7 and critical requests find at most 7 ahead.
   */
  readonly reserve?: number
}

/** The options of an adaptive limit, checked, with the defaults. */
export interface Settings {
  readonly name: string
  readonly min: number
  readonly max: number
  readonly windowMs: number
  readonly minSamples: number
  readonly probeSamples: number
  readonly tolerance: number
  readonly smoothing: number
  readonly queueSize: number
  readonly probeMs: number
  readonly jitter: number
  readonly probeRatio: number
  readonly reserve: number
}

const ADAPTIVE_OPTIONS: ReadonlySet<string> = new Set(
  'name min max initial window minSamples probeSamples tolerance smoothing queueSize probeInterval probeJitter probeRatio reserve'.split(
    ' ',
  ),
)
// Netflix concurrency-limits' names (Gradient2Limit's builder), as they are called here.
const ADAPTIVE_HINTS: ScopeHints = new Map([
  ['minLimit', 'min'],
  ['maxLimit', 'max'],
  ['maxConcurrency', 'max'],
  ['initialLimit', 'initial'],
  ['rttTolerance', 'tolerance'],
])

// `adaptive.name`: a non-empty string, as a shedder's `name` is (default 'adaptive').
function nameOf(name: unknown): string {
  if (name === undefined) return 'adaptive'
  if (typeof name !== 'string' || name === '')
    throw new LimiterTypeError('adaptive.name', name, 'a non-empty string')
  return name
}

/** Checks `options` (unknown names too) and fills in the defaults. */
export function settingsOf(given: AdaptiveOptions): Settings & { readonly initial: number } {
  const options = knownOptions(given, ADAPTIVE_OPTIONS, 'adaptive.', ADAPTIVE_HINTS)
  const big = Number.MAX_SAFE_INTEGER
  const min = numberIn(options.min, 'adaptive.min', 4, 1, big, true)
  const max = numberIn(options.max, 'adaptive.max', Math.max(1000, min), min, big, true)
  return {
    name: nameOf(options.name),
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
    probeSamples: numberIn(options.probeSamples, 'adaptive.probeSamples', 100, 1, big, true),
    tolerance: numberIn(options.tolerance, 'adaptive.tolerance', 1, 1, 10),
    smoothing: numberIn(options.smoothing, 'adaptive.smoothing', 0.2, 0.01, 1),
    queueSize: numberIn(options.queueSize, 'adaptive.queueSize', 4, 0, big),
    probeMs: parseDuration(options.probeInterval ?? 60_000, 'adaptive.probeInterval'),
    jitter: numberIn(options.probeJitter, 'adaptive.probeJitter', 0.25, 0, 0.99),
    probeRatio: numberIn(options.probeRatio, 'adaptive.probeRatio', 0.5, 0.01, 1),
    reserve: numberIn(options.reserve, 'adaptive.reserve', 0, 0, 0.99),
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
