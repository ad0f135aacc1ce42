// @limiter/core/otel: OpenTelemetry metrics from the limiters' diagnostics_channel events.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { type Meter, type MeterProvider, metrics } from '@opentelemetry/api'
import {
  CIRCUIT_CHANNEL,
  type CircuitEvent,
  DECISION_CHANNEL,
  type DecisionEvent,
  FAILURE_CHANNEL,
  type FailureEvent,
} from './events.js'
import type { Limiter } from './limiter-types.js'
import { LimiterAttributes } from './otel/attributes.js'
import { instrumentsOn } from './otel/instruments.js'

export type { LimiterResult } from './otel/attributes.js'
export { DURATION_BUCKETS_S, METRICS } from './otel/instruments.js'

/** Options of {@link instrumentLimiters}. */
export interface InstrumentOptions {
  /** The meter to record on. Default: one named `@limiter/core` from `meterProvider`. */
  readonly meter?: Meter | undefined
  /** Where the default meter comes from. Default: the global provider (`metrics.getMeterProvider()`). */
  readonly meterProvider?: MeterProvider | undefined
  /** Which limiters to record (default: all). Asked once per limiter. */
  readonly limiters?: ((limiter: Limiter) => boolean) | undefined
}

/** What {@link instrumentLimiters} returns. */
export interface LimiterInstrumentation {
  /**
   * Stops recording: unsubscribes from the channels, and takes the circuits it counted as open
   * off `limiter.circuits.open`. Idempotent.
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
 * - `limiter.store.duration` (histogram, `s`): decisions the store made (`limiter.name`,
 *   `limiter.store`).
 * - `limiter.store.failures` (counter, `{failure}`): `limiter.name`, `error.type` (the
 *   `LimiterError` code).
 * - `limiter.circuits.open` (up-down counter, `{circuit}`): `limiter.name`.
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
  const instruments = instrumentsOn(meter)
  const accept = options.limiters
  // Per limiter: its attribute sets, or `null` when the filter leaves it out.
  const seen = new WeakMap<Limiter, LimiterAttributes | null>()
  // The circuits counted as open, per limiter, so a close is counted only after its open.
  const open = new Map<Limiter, Set<string>>()

  const attributesOf = (limiter: Limiter): LimiterAttributes | null => {
    let attributes = seen.get(limiter)
    if (attributes === undefined) {
      attributes = accept === undefined || accept(limiter) ? new LimiterAttributes(limiter) : null
      seen.set(limiter, attributes)
    }
    return attributes
  }

  // A subscriber that throws would surface as an uncaught exception: never let one escape.
  const onDecision = (message: unknown) => {
    try {
      const event = message as DecisionEvent
      if (event.cost === 0) return
      const attributes = attributesOf(event.limiter)
      if (attributes === null) return
      instruments.decisions.add(1, attributes.decision(event.decision, event.store, event.shadow))
      if (event.source === 'store')
        instruments.storeDuration.record(event.durationMs / 1000, attributes.duration(event.store))
    } catch {}
  }
  const onFailure = (message: unknown) => {
    try {
      const event = message as FailureEvent
      const attributes = attributesOf(event.limiter)
      if (attributes !== null)
        instruments.storeFailures.add(1, attributes.failure(event.error.code))
    } catch {}
  }
  const onCircuit = (message: unknown) => {
    try {
      const event = message as CircuitEvent
      const attributes = attributesOf(event.limiter)
      if (attributes === null) return
      let domains = open.get(event.limiter)
      if (event.state === 'open') {
        if (domains === undefined) {
          domains = new Set()
          open.set(event.limiter, domains)
        }
        if (domains.has(event.domain)) return
        domains.add(event.domain)
        instruments.circuitsOpen.add(1, attributes.circuit())
      } else if (domains?.delete(event.domain)) {
        if (domains.size === 0) open.delete(event.limiter)
        instruments.circuitsOpen.add(-1, attributes.circuit())
      }
    } catch {}
  }

  subscribe(DECISION_CHANNEL, onDecision)
  subscribe(FAILURE_CHANNEL, onFailure)
  subscribe(CIRCUIT_CHANNEL, onCircuit)
  let stopped = false
  return {
    stop() {
      if (stopped) return
      stopped = true
      unsubscribe(DECISION_CHANNEL, onDecision)
      unsubscribe(FAILURE_CHANNEL, onFailure)
      unsubscribe(CIRCUIT_CHANNEL, onCircuit)
      for (const [limiter, domains] of open) {
        const attributes = attributesOf(limiter)
        if (attributes !== null) instruments.circuitsOpen.add(-domains.size, attributes.circuit())
      }
      open.clear()
    },
  }
}
