// Child process for section 7, one store: one limiter (the default algorithm), 10,000 keys all
// allowed, measured in short runs that alternate, round after round, between nobody subscribed
// to `limiter:decision`, a bare subscriber, the OpenTelemetry bridge on the real metrics
// SDK, with and without durations, and the inspector attached (and, with `core`, a limiter of another core build with nobody subscribed). Alternating
// in one process pairs each variant's run with the others' under the same machine load.
// Argument: JSON { store, port, inFlight, rounds, ops, core, only } (only: the variants to run). Prints one JSON line:
// { runs: { variant: [{ wall, cpu }] } (ns per decision), counted, expected }.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics'
import { Redis } from 'ioredis'
import { SCENARIOS } from './config.mjs'
import { drive } from './drive.mjs'

const { store, port, inFlight, rounds, ops, core, only } = JSON.parse(process.argv[2])
const { limit, windowMs, keyAt } = SCENARIOS.find((s) => s.id === 'distinct')
const here = await import('@limiter/core')
const { instrumentLimiters } = await import('@limiter/core/otel')

const clients = []
async function limiterOf({ createLimiter, MemoryStore, RedisStore }, prefix) {
  let client
  if (store === 'redis') {
    client = new Redis({ host: '127.0.0.1', port })
    await client.ping()
    clients.push(client)
  }
  const limiter = createLimiter({
    limit,
    window: windowMs,
    store: client ? new RedisStore({ client }) : new MemoryStore({ maxKeys: 200_000 }),
    prefix,
  })
  limiterOf.last = limiter
  return (key) => limiter.consume(key).then((d) => d.allowed)
}

// Collected once, at the end: a periodic exporter reads every minute or so, not per decision.
class Reader extends MetricReader {
  onShutdown = () => Promise.resolve()
  onForceFlush = () => Promise.resolve()
}
const reader = new Reader()
const meterProvider = new MeterProvider({ readers: [reader] })
const noop = () => {}
let bridge
let bridged = 0

const decide = await limiterOf(here, 'ev:')
const variants = {
  none: { decide },
  subscriber: {
    decide,
    on: () => subscribe('limiter:decision', noop),
    off: () => unsubscribe('limiter:decision', noop),
  },
  bridge: {
    decide,
    on: () => {
      bridge = instrumentLimiters({ meterProvider })
    },
    off: () => bridge.stop(),
    counts: true,
  },
  'bridge-counts': {
    decide,
    on: () => {
      bridge = instrumentLimiters({ meterProvider, durations: false })
    },
    off: () => bridge.stop(),
    counts: true,
  },
}
// The operator's page (@limiter/inspector, issue 28) attached to the same limiter: its recorder
// subscribes to the decisions (and, on Redis, writes its summaries there every 5 s). Loaded from
// its build in the workspace; skipped when it is not built.
const inspectorBuild = new URL('../../packages/inspector/dist/index.mjs', import.meta.url)
if (existsSync(inspectorBuild)) {
  const { inspector } = await import(inspectorBuild.href)
  const watched = limiterOf.last
  let page
  variants.inspector = {
    decide,
    on: () => {
      page = inspector({
        limiters: [watched],
        unsafe: true,
        ...(store === 'redis' ? { store: clients[0] } : {}),
      })
    },
    off: () => page.close(),
  }
}
if (core !== undefined) {
  const base = await import(pathToFileURL(join(core, 'dist', 'index.mjs')).href)
  variants.base = { decide: await limiterOf(base, 'ev-base:') }
}

async function measure(variant) {
  variant.on?.()
  try {
    const run = await drive(variant.decide, { keyAt, inFlight, durationMs: 60_000, maxOps: ops })
    if (run.errors > 0) throw new Error(`${run.errors} errors: ${run.firstError}`)
    if (run.allowedShare < 1) throw new Error(`allowed only ${run.allowedShare}`)
    if (variant.counts) bridged += run.decisions
    return { wall: 1e9 / run.perSecond, cpu: run.cpuUsPerDecision * 1000 }
  } finally {
    variant.off?.()
  }
}

const names = Object.keys(variants).filter((name) => only === undefined || only.includes(name))
for (let i = 0; i < 2; i++) for (const name of names) await measure(variants[name]) // warm-up
bridged = 0
const before = await countedNow()
const runs = Object.fromEntries(names.map((name) => [name, []]))
for (let round = 0; round < rounds; round++) {
  // a different variant goes first each round
  for (let k = 0; k < names.length; k++) {
    const name = names[(round + k) % names.length]
    runs[name].push(await measure(variants[name]))
  }
}
const counted = (await countedNow()) - before

async function countedNow() {
  const { resourceMetrics } = await reader.collect()
  let total = 0
  for (const scope of resourceMetrics.scopeMetrics)
    for (const metric of scope.metrics)
      if (metric.descriptor.name === 'limiter.decisions')
        for (const point of metric.dataPoints) total += point.value
  return total
}

for (const client of clients) client.disconnect()
process.stdout.write(`${JSON.stringify({ runs, counted, expected: bridged })}\n`)
process.exit(0)
