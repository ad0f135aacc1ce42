// Child process for the overload section: the load generator, in its own process so the server
// never shares an event loop with it. Argument: JSON { port, mode, rate, connections,
// criticalShare, warmupMs, measureMs, timeoutMs }. Prints one JSON line of results.
//
// - closed: `connections` clients, each sending its next request when the last one is answered,
//   for measureMs after warmupMs: the server's capacity (2xx/s).
// - open: requests leave on a fixed schedule (`rate` per second, evenly spaced), whether or not
//   the earlier ones were answered; one in 1/criticalShare is critical. A request unanswered
//   after `timeoutMs` is abandoned (its socket destroyed) and counts as a timeout. Latency is
//   from the request's scheduled time, so a late generator shows in it rather than hiding it;
//   the generator's own lag (sent time minus scheduled time) is reported apart.
import http from 'node:http'
import { performance } from 'node:perf_hooks'

const o = JSON.parse(process.argv[2])
const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY })

function classStats() {
  return { sent: 0, ok: 0, shed: 0, other: 0, timeouts: 0, errors: 0, latencies: [] }
}
const stats = { critical: classStats(), low: classStats() }
const lags = []
let pending = 0

function send(scheduledMs, cls, measured, onDone) {
  pending++
  const s = stats[cls]
  if (measured) s.sent++
  let finished = false
  const finish = (kind, status) => {
    if (finished) return
    finished = true
    pending--
    if (measured) {
      if (kind === 'timeout') s.timeouts++
      else if (kind === 'error') s.errors++
      else if (status >= 200 && status < 300) {
        s.ok++
        s.latencies.push(performance.now() - scheduledMs)
      } else if (status === 503) s.shed++
      else s.other++
    }
    onDone?.(kind === 'response' && status >= 200 && status < 300)
  }
  const req = http.request(
    {
      agent,
      host: '127.0.0.1',
      port: o.port,
      path: '/work',
      headers: { 'x-priority': cls },
    },
    (res) => {
      res.resume()
      res.on('end', () => finish('response', res.statusCode))
      res.on('error', () => finish('error'))
    },
  )
  const timer = setTimeout(() => {
    finish('timeout')
    req.destroy()
  }, o.timeoutMs)
  req.on('close', () => clearTimeout(timer))
  req.on('error', () => finish('error'))
  req.end()
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

function summary(s) {
  const sorted = s.latencies.sort((a, b) => a - b)
  const { latencies, ...counts } = s
  return { ...counts, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99) }
}

async function drain() {
  const until = performance.now() + o.timeoutMs + 1000
  while (pending > 0 && performance.now() < until) await new Promise((r) => setTimeout(r, 20))
}

async function closed() {
  const start = performance.now()
  const measureFrom = start + o.warmupMs
  const end = measureFrom + o.measureMs
  const client = () =>
    new Promise((resolve) => {
      const next = () => {
        const now = performance.now()
        if (now >= end) return resolve()
        send(now, 'low', now >= measureFrom, () => next())
      }
      next()
    })
  await Promise.all(Array.from({ length: o.connections }, client))
}

async function open() {
  const start = performance.now()
  const gapMs = 1000 / o.rate
  const total = Math.round(((o.warmupMs + o.measureMs) / 1000) * o.rate)
  const every = Math.round(1 / o.criticalShare)
  let i = 0
  const eluStart = performance.eventLoopUtilization()
  await new Promise((resolve) => {
    const tick = () => {
      const now = performance.now()
      while (i < total && start + i * gapMs <= now) {
        const scheduled = start + i * gapMs
        const measured = scheduled - start >= o.warmupMs
        if (measured) lags.push(now - scheduled)
        send(scheduled, i % every === 0 ? 'critical' : 'low', measured)
        i++
      }
      if (i >= total) resolve()
      else setTimeout(tick, 1)
    }
    tick()
  })
  return performance.eventLoopUtilization(eluStart).utilization
}

const t0 = performance.now()
const generatorElu = o.mode === 'closed' ? await closed() : await open()
await drain()
const sortedLags = lags.sort((a, b) => a - b)
const result = {
  seconds: o.measureMs / 1000,
  critical: summary(stats.critical),
  low: summary(stats.low),
  unfinished: pending,
  lagP99Ms: percentile(sortedLags, 99),
  lagMaxMs: sortedLags.at(-1) ?? null,
  generatorElu: generatorElu ?? null,
  wallMs: performance.now() - t0,
}
process.stdout.write(`${JSON.stringify(result)}\n`)
agent.destroy()
process.exit(0)
