// Section 7: what the limiter events cost per decision. One limiter (the default algorithm),
// 10,000 keys all allowed, on MemoryStore and on Redis, with nobody subscribed to
// `limiter:decision`, with a bare subscriber, and with the OpenTelemetry bridge on the real
// metrics SDK; optionally (`--events-base=<core package dir>`) another build of core with nobody
// subscribed, for an A/B of the unsubscribed path. Each run in a child process of its own.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { median } from './stats.mjs'

const CHILD = fileURLToPath(new URL('./events-child.mjs', import.meta.url))

/** The variants, in the order they run and print. */
export const EVENT_VARIANTS = [
  { id: 'base', label: 'the base build, nobody subscribed' },
  { id: 'none', label: 'nobody subscribed' },
  { id: 'subscriber', label: 'a bare subscriber' },
  { id: 'bridge', label: 'the OpenTelemetry bridge' },
]

function measure(config) {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [CHILD, JSON.stringify(config)],
      { timeout: 60_000, maxBuffer: 1 << 20 },
      (error, stdout) => {
        if (error) return reject(error)
        resolve(JSON.parse(stdout.trim().split('\n').at(-1)))
      },
    )
  })
}

/**
 * Runs every variant on each store `profile.reps` times, interleaved (rep 1 of every variant,
 * then rep 2, ...). Returns one row per (store, variant) with medians and each run's rate.
 */
export async function runEvents({ profile, port, admin, log, eventsBase }) {
  const inFlight = Math.max(...profile.inFlight)
  const variants = EVENT_VARIANTS.filter((v) => v.id !== 'base' || eventsBase !== undefined)
  const plan = ['memory', 'redis'].flatMap((store) =>
    variants.map((variant) => ({ store, variant, runs: [] })),
  )
  for (let rep = 1; rep <= profile.reps; rep++) {
    for (const entry of plan) {
      const { store, variant } = entry
      const run = await measure({
        variant: variant.id === 'base' ? 'none' : variant.id,
        store,
        port,
        inFlight,
        runMs: store === 'redis' ? profile.redisRunMs : profile.memoryRunMs,
        warmupMs: profile.warmupMs,
        core: variant.id === 'base' ? eventsBase : undefined,
      })
      if (store === 'redis') await admin.flushdb()
      entry.runs.push(run)
      const k = `${Math.round(run.perSecond / 100) / 10}k/s`
      const cpu = `CPU ${run.cpuUsPerDecision.toFixed(2)} µs/dec`
      log(`  rep ${rep}/${profile.reps}  ${store.padEnd(6)} ${variant.id.padEnd(10)} ${k} ${cpu}`)
    }
  }
  return plan.map(({ store, variant, runs }) => {
    const pick = (field) => median(runs.map((r) => r[field]))
    const bridge = variant.id === 'bridge'
    return {
      store,
      variant: variant.id,
      label: variant.label,
      inFlight,
      perSecond: pick('perSecond'),
      p50Ms: pick('p50Ms'),
      cpuUsPerDecision: pick('cpuUsPerDecision'),
      allowedShare: pick('allowedShare'),
      errors: runs.reduce((a, r) => a + r.errors, 0),
      firstError: runs.find((r) => r.firstError)?.firstError,
      // the bridge must have counted every decision of every run
      uncounted: bridge ? runs.reduce((a, r) => a + (r.expected - r.counted), 0) : undefined,
      reps: runs.map((r) => Math.round(r.perSecond)),
    }
  })
}
