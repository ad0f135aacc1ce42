// An Express app whose limiters report to OpenTelemetry, exposed for Prometheus at /metrics:
// a global limit, a route limit, and a stricter route limit tried out in shadow mode (counted,
// never enforced) to see who it would hit. MemoryStore by default; set REDIS_URL for Redis.
import { instrumentLimiters } from '@limiter/core/otel'
import { rateLimit } from '@limiter/express'
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus'
import { MeterProvider } from '@opentelemetry/sdk-metrics'
import express from 'express'
import { Redis } from 'ioredis'

const port = Number(process.env.PORT ?? 3000)
const redis = process.env.REDIS_URL ? new Redis(process.env.REDIS_URL) : undefined
const store = redis === undefined ? {} : { redis, prefix: 'example-metrics:' }

// The OpenTelemetry SDK, read by the Prometheus exporter on each scrape. The exporter serves
// nothing itself here (preventServerStart): the app mounts its handler at /metrics.
const exporter = new PrometheusExporter({ preventServerStart: true })
const meterProvider = new MeterProvider({ readers: [exporter] })
// Every limiter in this process now counts its decisions on `meterProvider`.
const instrumentation = instrumentLimiters({ meterProvider })

const app = express()

// Before the limiters: scrapes are never limited, nor counted.
app.get('/metrics', (req, res) => exporter.getMetricsRequestHandler(req, res))

// Global: 100 requests per minute per client IP.
app.use(rateLimit({ name: 'global', limit: 100, window: '1m', ...store }))

app.get(
  '/api/items',
  // A candidate for a stricter limit, in shadow mode: every request is counted, none refused.
  // limiter_decisions_total{limiter_name="items-strict",limiter_result="limited"} shows who it
  // would have hit. It runs first so it sees every request, refused below or not.
  rateLimit({ name: 'items-strict', limit: 3, window: '10s', mode: 'shadow', ...store }),
  // The limit enforced today: 5 per 10 s per client IP.
  rateLimit({ name: 'items', limit: 5, window: '10s', ...store }),
  (_req, res) => {
    res.json({ items: [] })
  },
)

const server = app.listen(port, '127.0.0.1', () => {
  const where = redis === undefined ? 'MemoryStore (this process only)' : 'Redis (REDIS_URL)'
  const { port: bound } = server.address()
  console.log(`example-metrics listening on http://127.0.0.1:${bound} · counters in ${where}`)
})

// The app's own shutdown, which stops the bridge in turn: stop taking requests and let those in
// flight finish (their decisions are counted), then stop the bridge, flush the SDK, and exit. A
// SIGTERM listener replaces Node's default exit, so this one must end the process itself.
function shutdown() {
  server.close(async () => {
    instrumentation.stop()
    redis?.disconnect()
    await meterProvider.shutdown()
    process.exit(0)
  })
  server.closeIdleConnections()
}
process.once('SIGINT', shutdown)
process.once('SIGTERM', shutdown)
