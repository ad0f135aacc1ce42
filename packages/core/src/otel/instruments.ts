// The bridge's instruments: names, units and descriptions, made once per meter.
import type { Counter, Histogram, Meter, UpDownCounter } from '@opentelemetry/api'

/** The metric names the bridge records (no semantic conventions exist for rate limiting). */
export const METRICS = Object.freeze({
  decisions: 'limiter.decisions',
  storeDuration: 'limiter.store.duration',
  storeFailures: 'limiter.store.failures',
  circuitsOpen: 'limiter.circuits.open',
} as const)

/**
 * Store call durations, in seconds: from a MemoryStore's microseconds to the 500 ms default
 * deadline of a Redis call, finest where a healthy Redis answers (0.1 to 5 ms).
 */
export const DURATION_BUCKETS_S: readonly number[] = Object.freeze([
  0.00001, 0.0001, 0.00025, 0.0005, 0.00075, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
  0.5, 1,
])

/** The bridge's four instruments on one meter. */
export interface Instruments {
  readonly decisions: Counter
  readonly storeDuration: Histogram
  readonly storeFailures: Counter
  readonly circuitsOpen: UpDownCounter
}

/** Creates the instruments on `meter`. */
export function instrumentsOn(meter: Meter): Instruments {
  return {
    decisions: meter.createCounter(METRICS.decisions, {
      unit: '{decision}',
      description: 'Rate limit decisions, by limiter, deciding policy and result.',
    }),
    storeDuration: meter.createHistogram(METRICS.storeDuration, {
      unit: 's',
      description: "Time from a limiter's ask to its store's decision (a round trip for Redis).",
      advice: { explicitBucketBoundaries: [...DURATION_BUCKETS_S] },
    }),
    storeFailures: meter.createCounter(METRICS.storeFailures, {
      unit: '{failure}',
      description: 'Store calls that failed or missed their deadline, by error code.',
    }),
    circuitsOpen: meter.createUpDownCounter(METRICS.circuitsOpen, {
      unit: '{circuit}',
      description: 'Open circuits: failure domains whose store calls are skipped for a while.',
    }),
  }
}
