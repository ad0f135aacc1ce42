// Checks of the shedder's and the adaptive limit's options, at construction.
import { parseDuration } from '../common/duration.js'
import { LimiterTypeError } from '../common/errors.js'
import { knownOptions, type ScopeHints } from '../common/option-names.js'
import { numberIn } from './number-option.js'
import type { ShedSignal } from './signals.js'
import type { ShedderOptions, ShedReading, ShedThresholds } from './types.js'

const SHEDDER_OPTIONS: ReadonlySet<string> = new Set(
  'name interval recovery steps recoveryBand thresholds mode adaptive'.split(' '),
)
const THRESHOLDS: ReadonlySet<string> = new Set(['elu', 'delay', 'inflight', 'queue', 'heap'])

const NO_RSS =
  'there is no RSS signal: `thresholds: { heap }` (heap in use, in bytes) is the memory one'
// ours is a p99, @fastify/under-pressure's a mean: at the same number, ours trips sooner
const DELAY =
  "is `thresholds: { delay }` here, in ms or a duration such as '200ms' (the interval's p99 event-loop delay, where @fastify/under-pressure's is a mean)"

// @fastify/under-pressure's options, and thresholds given at the top level, as they are here.
const SHEDDER_HINTS: ScopeHints = new Map([
  ['maxEventLoopDelay', `@fastify/under-pressure's \`maxEventLoopDelay\` ${DELAY}`],
  [
    'maxEventLoopUtilization',
    "@fastify/under-pressure's `maxEventLoopUtilization` is `thresholds: { elu }` here (0 to 1)",
  ],
  [
    'maxHeapUsedBytes',
    "@fastify/under-pressure's `maxHeapUsedBytes` is `thresholds: { heap }` here (bytes)",
  ],
  ['maxRssBytes', NO_RSS],
  [
    'retryAfter',
    "there is no such option: a refusal's `retryAfterMs` is worked out by the shedder, when its class would be admitted again if the load dropped now",
  ],
  ['sampleInterval', 'interval'],
  [
    'exposeStatusRoute',
    'there is no status route: `shedder.state()` returns the last reading and what is shed',
  ],
  ...[...THRESHOLDS].map((t) => [t, `a threshold: \`thresholds: { ${t} }\``] as const),
  ...['min', 'max', 'initial'].map(
    (a) => [a, `adaptive concurrency's: \`adaptive: { ${a} }\``] as const,
  ),
])

// Other names for the signals (@fastify/under-pressure's among them).
const THRESHOLD_HINTS: ScopeHints = new Map([
  ['eventLoopDelay', 'delay'],
  ['maxEventLoopDelay', 'delay'],
  ['eventLoopUtilization', 'elu'],
  ['eventLoopUtilized', 'elu'],
  ['maxEventLoopUtilization', 'elu'],
  ['heapUsed', 'heap'],
  ['heapUsedBytes', 'heap'],
  ['maxHeapUsedBytes', 'heap'],
  ['rss', NO_RSS],
  ['rssBytes', NO_RSS],
  ['maxRssBytes', NO_RSS],
])

/** `createShedder`'s options as own properties of known names only: an unknown one throws. */
export function shedderOptions(options: ShedderOptions): ShedderOptions {
  return knownOptions(options, SHEDDER_OPTIONS, '', SHEDDER_HINTS)
}

/** The thresholds in force, in the signals' units (ms, bytes). */
export interface Limits {
  readonly elu: number | undefined
  readonly delay: number | undefined
  readonly inflight: number | undefined
  readonly queue: number | undefined
  readonly heap: number | undefined
}

/** The thresholds of `t`, checked, with the defaults. */
export function limitsOf(given: ShedThresholds = {}): Limits {
  const t = knownOptions(given, THRESHOLDS, 'thresholds.', THRESHOLD_HINTS)
  const big = Number.MAX_SAFE_INTEGER
  const on = <T>(v: T | false | undefined, fallback: T | undefined): T | undefined =>
    v === false ? undefined : (v ?? fallback)
  const elu = on(t.elu, 0.9)
  const delay = on(t.delay, 200)
  const inflight = on(t.inflight, undefined)
  const queue = on(t.queue, undefined)
  const heap = on(t.heap, undefined)
  return {
    elu: elu === undefined ? undefined : numberIn(elu, 'thresholds.elu', 0.9, 0.01, 1),
    delay: delay === undefined ? undefined : parseDuration(delay, 'thresholds.delay'),
    inflight:
      inflight === undefined
        ? undefined
        : numberIn(inflight, 'thresholds.inflight', 0, 1, big, true),
    queue: queue === undefined ? undefined : parseDuration(queue, 'thresholds.queue'),
    heap: heap === undefined ? undefined : numberIn(heap, 'thresholds.heap', 0, 1, big),
  }
}

/** The first signal over its threshold, in the order elu, delay, inflight, queue, heap. */
export function overOf(limits: Limits, r: ShedReading): ShedSignal | undefined {
  if (limits.elu !== undefined && r.elu > limits.elu) return 'elu'
  if (limits.delay !== undefined && r.delayMs > limits.delay) return 'delay'
  if (limits.inflight !== undefined && r.inflight > limits.inflight) return 'inflight'
  if (limits.queue !== undefined && r.queueMs > limits.queue) return 'queue'
  if (limits.heap !== undefined && r.heapUsedBytes > limits.heap) return 'heap'
  return undefined
}

/** Whether a signal other than ELU (a share, at most 1) is over twice its threshold. */
export function farOver(limits: Limits, r: ShedReading): boolean {
  return (
    (limits.delay !== undefined && r.delayMs > 2 * limits.delay) ||
    (limits.inflight !== undefined && r.inflight > 2 * limits.inflight) ||
    (limits.queue !== undefined && r.queueMs > 2 * limits.queue) ||
    (limits.heap !== undefined && r.heapUsedBytes > 2 * limits.heap)
  )
}

/**
 * Whether any signal is in the recovery band: over `1 - band` times its threshold. Heap and
 * in-flight scale the same way as the others.
 */
export function inBand(limits: Limits, r: ShedReading, band: number): boolean {
  const k = 1 - band
  return (
    (limits.elu !== undefined && r.elu > limits.elu * k) ||
    (limits.delay !== undefined && r.delayMs > limits.delay * k) ||
    (limits.inflight !== undefined && r.inflight > limits.inflight * k) ||
    (limits.queue !== undefined && r.queueMs > limits.queue * k) ||
    (limits.heap !== undefined && r.heapUsedBytes > limits.heap * k)
  )
}

/** Checks an option of `createShedder`. */
export function checkMode(mode: unknown): 'enforce' | 'shadow' {
  if (mode === undefined || mode === 'enforce' || mode === 'shadow') return mode ?? 'enforce'
  throw new LimiterTypeError('mode', mode, "'enforce' or 'shadow'")
}

/** Checks an option of `createShedder`. */
export function checkName(name: unknown): string {
  if (name === undefined) return 'shedder'
  if (typeof name !== 'string' || name === '')
    throw new LimiterTypeError('name', name, 'a non-empty string')
  return name
}
