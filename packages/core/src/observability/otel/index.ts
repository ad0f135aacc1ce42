// @limiter/core/otel: OpenTelemetry metrics from the limiters' diagnostics_channel events.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { type Meter, type MeterProvider, metrics } from '@opentelemetry/api'
import type { Limiter } from '../../limiter/types.js'
import {
  CIRCUIT_CHANNEL,
  type CircuitEvent,
  DECISION_CHANNEL,
  type DecisionEvent,
  FAILURE_CHANNEL,
  type FailureEvent,
} from '../events.js'
import { type BridgeTallies, LimiterTallies } from './attributes.js'
import type { Instruments } from './instruments.js'
import { sharedBy } from './meters.js'
import { recordShedding } from './shed.js'

export type { LimiterResult } from './attributes.js'
export { DURATION_BUCKETS_S, METRICS } from './instruments.js'

/** Options of {@link instrumentLimiters}. */
export interface InstrumentOptions {
  /** The meter to record on. Default: one named `@limiter/core` from `meterProvider`. */
  readonly meter?: Meter | undefined
  /** Where the default meter comes from. Default: the global provider (`metrics.getMeterProvider()`). */
  readonly meterProvider?: MeterProvider | undefined
  /** Which limiters to record (default: all). Asked once per limiter. */
  readonly limiters?: ((limiter: Limiter) => boolean) | undefined
  /**
   * Record `limiter.store.duration` (default `true`). The histogram is the bridge's costliest
   * part: the SDK hashes its attributes on every record, about as much CPU as a Redis decision's
   * own share in Node; `false` leaves the counts alone.
   */
  readonly durations?: boolean | undefined
}

/** What {@link instrumentLimiters} returns. */
export interface LimiterInstrumentation {
  /**
   * Stops recording: unsubscribes from the channels. The counts stay where they are (a bridge
   * started again on the same meter continues them), except `limiter.circuits.open`, which no
   * longer counts the circuits this bridge saw open. Idempotent.
   */
  stop(): void
}

/**
 * Records every limiter's decisions, store calls, store failures and open circuits as
 * OpenTelemetry metrics, from the `limiter:*` diagnostics channels, until `stop()`:
 *
 * - `limiter.decisions` (counter, `{decision}`): `limiter.name`, `limiter.policy`,
 *   `limiter.result` (`allowed`, `limited`, `failed_open`, `failed_closed`, `local`),
 *   `limiter.store` (`memory`, `redis`, `custom`) and `limiter.shadow`. Peeks (cost 0) are not
 *   counted.
 * - `limiter.store.duration` (histogram, `s`): the decisions a remote store (not a MemoryStore)
 *   made, by `limiter.name` and `limiter.store`.
 * - `limiter.store.failures` (counter, `{failure}`): `limiter.name`, `error.type` (the
 *   `LimiterError` code).
 * - `limiter.circuits.open` (up-down counter, `{circuit}`): `limiter.name`.
 * - `limiter.shed` (counter, `{request}`): requests a `@limiter/core/shed` shedder refused (or
 *   would have, in shadow mode): `limiter.name` (the shedder's), `limiter.priority`,
 *   `limiter.signal`, `limiter.shadow`. The `limiters` filter does not apply.
 *
 * The counts are kept by the bridge and observed when the SDK collects (asynchronous
 * instruments): a decision costs an increment, not an SDK call.
 *
 * @example
 * import { instrumentLimiters } from '@limiter/core/otel'
 * const instrumentation = instrumentLimiters({ meterProvider })
 * // later, on shutdown:
 * instrumentation.stop()
 */
export function instrumentLimiters(options: InstrumentOptions = {}): LimiterInstrumentation {
  const meter =
    options.meter ?? (options.meterProvider ?? metrics.getMeterProvider()).getMeter('@limiter/core')
  const { instruments, tallies } = sharedBy(meter)
  const talliesOf = talliesFilter(options.limiters, tallies)
  // The limiters whose circuits this bridge counted open: it forgets them on stop().
  const opened = new Set<LimiterTallies>()
  const onDecision = decisionListener(talliesOf, instruments, options.durations !== false)
  const onFailure = failureListener(talliesOf)
  const onCircuit = circuitListener(talliesOf, opened)

  subscribe(DECISION_CHANNEL, onDecision)
  subscribe(FAILURE_CHANNEL, onFailure)
  subscribe(CIRCUIT_CHANNEL, onCircuit)
  const stopShedding = recordShedding(meter)
  let stopped = false
  return {
    stop() {
      if (stopped) return
      stopped = true
      unsubscribe(DECISION_CHANNEL, onDecision)
      unsubscribe(FAILURE_CHANNEL, onFailure)
      unsubscribe(CIRCUIT_CHANNEL, onCircuit)
      stopShedding()
      forgetOpen(opened)
    },
  }
}

/** A limiter's tallies, or `null` when the filter leaves it out. */
type TalliesOf = (limiter: Limiter) => LimiterTallies | null

// Per limiter: its tallies, or `null` when the filter leaves it out (asked once per limiter).
function talliesFilter(
  accept: ((limiter: Limiter) => boolean) | undefined,
  tallies: BridgeTallies,
): TalliesOf {
  const seen = new WeakMap<Limiter, LimiterTallies | null>()
  return (limiter: Limiter): LimiterTallies | null => {
    let mine = seen.get(limiter)
    if (mine === undefined) {
      mine = accept === undefined || accept(limiter) ? new LimiterTallies(limiter, tallies) : null
      seen.set(limiter, mine)
    }
    return mine
  }
}

// A subscriber that throws would surface as an uncaught exception: the listeners below never let
// one escape.
function decisionListener(
  talliesOf: TalliesOf,
  instruments: Instruments,
  durations: boolean,
): (message: unknown) => void {
  return (message: unknown) => {
    try {
      const event = message as DecisionEvent
      if (event.cost === 0) return
      const mine = talliesOf(event.limiter)
      if (mine === null) return
      mine.decision(event.decision, event.store, event.shadow).value++
      if (durations && event.source === 'store' && event.store !== 'memory')
        instruments.storeDuration.record(event.durationMs / 1000, mine.duration(event.store))
    } catch {}
  }
}

function failureListener(talliesOf: TalliesOf): (message: unknown) => void {
  return (message: unknown) => {
    try {
      const event = message as FailureEvent
      const mine = talliesOf(event.limiter)
      if (mine !== null) mine.failure(event.error.code).value++
    } catch {}
  }
}

function circuitListener(
  talliesOf: TalliesOf,
  opened: Set<LimiterTallies>,
): (message: unknown) => void {
  return (message: unknown) => {
    try {
      const event = message as CircuitEvent
      const mine = talliesOf(event.limiter)
      if (mine === null) return
      // each domain counted once while open; a close we never saw open changes nothing
      if (event.state === 'open') {
        if (mine.openDomains.has(event.domain)) return
        mine.openDomains.add(event.domain)
        opened.add(mine)
        mine.circuit().value++
      } else if (mine.openDomains.delete(event.domain)) mine.circuit().value--
    } catch {}
  }
}

// On stop(): circuits this bridge can no longer see close are no longer counted open.
function forgetOpen(opened: Set<LimiterTallies>): void {
  for (const mine of opened) {
    mine.circuit().value -= mine.openDomains.size
    mine.openDomains.clear()
  }
  opened.clear()
}
