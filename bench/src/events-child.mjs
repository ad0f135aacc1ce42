// Child process for one measurement of section 7: one limiter (the default algorithm) on
// MemoryStore or Redis, with nobody on `limiter:decision`, a bare subscriber, or the
// OpenTelemetry bridge recording on the real metrics SDK. A process of its own, since
// subscriptions are process-wide. Argument: JSON { variant, store, port, inFlight, runMs,
// warmupMs, core }, `core` the path of a core package to load instead of this repo's (A/B
// against another build, variant `none` only). Prints one JSON line: drive()'s result, plus
// for the bridge the decisions it counted (which must be all of them).
import { subscribe } from 'node:diagnostics_channel'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Redis } from 'ioredis'
import { SCENARIOS } from './config.mjs'
import { drive } from './drive.mjs'

const { variant, store, port, inFlight, runMs, warmupMs, core } = JSON.parse(process.argv[2])
const entry = (name) =>
  core === undefined
    ? import(`@limiter/core${name}`)
    : import(pathToFileURL(join(core, 'dist', `${name === '' ? 'index' : name.slice(1)}.mjs`)).href)
const { createLimiter, MemoryStore, RedisStore } = await entry('')
const { limit, windowMs, keyAt } = SCENARIOS.find((s) => s.id === 'distinct')

const client = store === 'redis' ? new Redis({ host: '127.0.0.1', port }) : undefined
if (client) await client.ping()
const limiter = createLimiter({
  limit,
  window: windowMs,
  store: client ? new RedisStore({ client }) : new MemoryStore({ maxKeys: 200_000 }),
  prefix: `ev-${variant}:`,
})

let counted
if (variant === 'subscriber') subscribe('limiter:decision', () => {})
if (variant === 'bridge') {
  const { instrumentLimiters } = await entry('/otel')
  const { MeterProvider, MetricReader } = await import('@opentelemetry/sdk-metrics')
  // Collected once, at the end: a periodic exporter would read every 60 s or so, not per run.
  class Reader extends MetricReader {
    onShutdown = () => Promise.resolve()
    onForceFlush = () => Promise.resolve()
  }
  const reader = new Reader()
  instrumentLimiters({ meterProvider: new MeterProvider({ readers: [reader] }) })
  counted = async () => {
    const { resourceMetrics } = await reader.collect()
    let total = 0
    for (const scope of resourceMetrics.scopeMetrics)
      for (const metric of scope.metrics)
        if (metric.descriptor.name === 'limiter.decisions')
          for (const point of metric.dataPoints) total += point.value
    return total
  }
}

const decide = (key) => limiter.consume(key).then((d) => d.allowed)
const warm = await drive(decide, { keyAt, inFlight, durationMs: warmupMs })
const run = await drive(decide, { keyAt, inFlight, durationMs: runMs })
const result = { ...run, counted: await counted?.(), expected: warm.decisions + run.decisions }
client?.disconnect()
process.stdout.write(`${JSON.stringify(result)}\n`)
process.exit(0)
