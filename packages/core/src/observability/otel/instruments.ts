// The bridge's instruments: names, units and descriptions, made once per meter.
import type {
  Histogram,
  Meter,
  ObservableCounter,
  ObservableUpDownCounter,
} from '@opentelemetry/api'

/** The metric names the bridge records (no semantic conventions exist for rate limiting). */
export const METRICS = Object.freeze({
  decisions: 'limiter.decisions',
  storeDuration: 'limiter.store.duration',
  storeFailures: 'limiter.store.failures',
  circuitsOpen: 'limiter.circuits.open',
} as const)

/**
 * Store call durations, in seconds: from 100 µs to the 500 ms default deadline of a Redis call
 * (and past it), finest where a healthy Redis answers (0.1 to 10 ms).
 */
export const DURATION_BUCKETS_S: readonly number[] = Object.freeze([
  0.0001, 0.00025, 0.0005, 0.00075, 0.001, 0.0025, 0.005, 0.0075, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
  1,
])

/**
 * The bridge's four instruments on one meter. The counts are asynchronous instruments, observed
 * from the bridge's own tallies when the SDK collects; only durations are recorded as they come.
 */
export interface Instruments {
  readonly decisions: ObservableCounter
  readonly storeDuration: Histogram
  readonly storeFailures: ObservableCounter
  readonly circuitsOpen: ObservableUpDownCounter
}

/** Creates the instruments on `meter`. */
export function instrumentsOn(meter: Meter): Instruments {
  return {
    decisions: meter.createObservableCounter(METRICS.decisions, {
      unit: '{decision}',
      description: 'Rate limit decisions, by limiter, deciding policy and result.',
    }),
    storeDuration: meter.createHistogram(METRICS.storeDuration, {
      unit: 's',
      description: "Time from a limiter's ask to its remote store's decision (a round trip).",
      advice: { explicitBucketBoundaries: [...DURATION_BUCKETS_S] },
    }),
    storeFailures: meter.createObservableCounter(METRICS.storeFailures, {
      unit: '{failure}',
      description: 'Store calls that failed or missed their deadline, by error code.',
    }),
    circuitsOpen: meter.createObservableUpDownCounter(METRICS.circuitsOpen, {
      unit: '{circuit}',
      description: 'Open circuits: failure domains whose store calls are skipped for a while.',
    }),
  }
}
