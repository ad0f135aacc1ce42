// The real OpenTelemetry metrics SDK with a reader that tests collect from on demand.
import type { Attributes } from '@opentelemetry/api'
import {
  DataPointType,
  type Histogram,
  MeterProvider,
  MetricReader,
} from '@opentelemetry/sdk-metrics'

class TestReader extends MetricReader {
  protected override onShutdown(): Promise<void> {
    return Promise.resolve()
  }
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve()
  }
}

/** One data point: its attributes and its value (a sum, or a histogram's count and sum). */
export interface Point {
  readonly attributes: Attributes
  readonly value: number
  readonly histogram?: Histogram
}

/** A MeterProvider and what its instruments hold now. */
export interface MetricsSdk {
  readonly meterProvider: MeterProvider
  /** Every data point of `name` now (a histogram's `value` is its count). */
  points(name: string): Promise<Point[]>
  /** The unit and meter of `name`, or undefined when nothing was recorded. */
  descriptor(
    name: string,
  ): Promise<{ unit: string; scope: string; kind: 'counter' | 'up-down' | 'histogram' } | undefined>
  shutdown(): Promise<void>
}

/** The real SDK: a MeterProvider and a reader collected on demand. */
export function metricsSdk(): MetricsSdk {
  const reader = new TestReader()
  const meterProvider = new MeterProvider({ readers: [reader] })
  return {
    meterProvider,
    async points(name) {
      const { resourceMetrics, errors } = await reader.collect()
      if (errors.length > 0) throw errors[0]
      const points: Point[] = []
      for (const scope of resourceMetrics.scopeMetrics) {
        for (const metric of scope.metrics) {
          if (metric.descriptor.name !== name) continue
          for (const p of metric.dataPoints) {
            if (metric.dataPointType === DataPointType.HISTOGRAM) {
              const histogram = p.value as Histogram
              points.push({ attributes: p.attributes, value: histogram.count, histogram })
            } else points.push({ attributes: p.attributes, value: p.value as number })
          }
        }
      }
      return points
    },
    async descriptor(name) {
      const { resourceMetrics } = await reader.collect()
      for (const scope of resourceMetrics.scopeMetrics)
        for (const metric of scope.metrics)
          if (metric.descriptor.name === name) {
            const kind =
              metric.dataPointType === DataPointType.HISTOGRAM
                ? 'histogram'
                : metric.dataPointType === DataPointType.SUM && metric.isMonotonic
                  ? 'counter'
                  : 'up-down'
            return { unit: metric.descriptor.unit, scope: scope.scope.name, kind }
          }
      return undefined
    },
    shutdown: () => meterProvider.shutdown(),
  }
}

/** The value of the point of `name` whose attributes include `match` (0 when none). */
export function sumOf(points: readonly Point[], match: Attributes): number {
  let total = 0
  for (const p of points)
    if (Object.entries(match).every(([k, v]) => p.attributes[k] === v)) total += p.value
  return total
}

/** The points as `"k=v,k=v" -> value`, attributes sorted, for exact comparisons. */
export function table(points: readonly Point[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const p of points) {
    const key = Object.keys(p.attributes)
      .sort()
      .map((k) => `${k}=${String(p.attributes[k])}`)
      .join(',')
    out[key] = (out[key] ?? 0) + p.value
  }
  return out
}
