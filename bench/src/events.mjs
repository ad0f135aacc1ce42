// Section 7: what the limiter events cost per decision. One limiter (the default algorithm),
// 10,000 keys all allowed, on MemoryStore and on Redis, with nobody subscribed to
// `limiter:decision`, with a bare subscriber, and with the OpenTelemetry bridge on the real
// metrics SDK; optionally (`--events-base=<core package dir>`) a limiter of another core build
// with nobody subscribed. One child process per store alternates the variants in short runs,
// round after round, and each variant is compared with nobody subscribed in the same round.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { median, percentile } from './stats.mjs'

const CHILD = fileURLToPath(new URL('./events-child.mjs', import.meta.url))

/** The variants, in the order they print. */
export const EVENT_VARIANTS = [
  { id: 'base', label: 'the base build, nobody subscribed' },
  { id: 'none', label: 'nobody subscribed' },
  { id: 'subscriber', label: 'a bare subscriber' },
  { id: 'bridge', label: 'the OpenTelemetry bridge' },
  { id: 'bridge-counts', label: 'the bridge, durations: false' },
  { id: 'inspector', label: 'the inspector attached' },
]

// Decisions per run: a few ms to a few tens of ms each, so rounds are many and short.
const OPS = { memory: 20_000, redis: 3_000 }

function measure(config) {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [CHILD, JSON.stringify(config)],
      { timeout: 300_000, maxBuffer: 1 << 22 },
      (error, stdout) => {
        if (error) return reject(error)
        resolve(JSON.parse(stdout.trim().split('\n').at(-1)))
      },
    )
  })
}

// The median and quartiles of `values`.
function spread(values) {
  const sorted = Float64Array.from(values).sort()
  return { median: median([...sorted]), q1: percentile(sorted, 25), q3: percentile(sorted, 75) }
}

/** One row per variant of `store`: medians, and the paired differences to nobody subscribed. */
function rowsOf(store, result, inFlight, rounds) {
  const none = result.runs.none
  return EVENT_VARIANTS.filter((v) => result.runs[v.id] !== undefined).map((variant) => {
    const runs = result.runs[variant.id]
    const paired = (f) => spread(runs.map((r, i) => f(r, none[i])))
    return {
      store,
      variant: variant.id,
      label: variant.label,
      inFlight,
      rounds,
      perSecond: 1e9 / median(runs.map((r) => r.wall)),
      cpuUsPerDecision: median(runs.map((r) => r.cpu)) / 1000,
      // each round: this variant's decisions/s over nobody subscribed's
      ratio: paired((r, n) => n.wall / r.wall),
      cpuNs: paired((r, n) => r.cpu - n.cpu),
      wallNs: paired((r, n) => r.wall - n.wall),
      uncounted: variant.id === 'bridge' ? result.expected - result.counted : undefined,
    }
  })
}

/**
 * Measures each store in a child process: `10 x profile.reps` rounds, each run of every variant
 * (or of the `only` ones: ids of EVENT_VARIANTS) once. Returns one row per (store, variant).
 */
export async function runEvents({ profile, port, admin, log, eventsBase }, only = undefined) {
  const inFlight = Math.max(...profile.inFlight)
  const rounds = 10 * profile.reps
  const rows = []
  for (const store of ['memory', 'redis']) {
    const started = performance.now()
    const result = await measure({
      store,
      port,
      inFlight,
      rounds,
      ops: OPS[store],
      core: eventsBase,
      only,
    })
    if (store === 'redis') await admin.flushdb()
    const mine = rowsOf(store, result, inFlight, rounds)
    rows.push(...mine)
    const s = ((performance.now() - started) / 1000).toFixed(0)
    log(`  ${store}: ${rounds} rounds of ${OPS[store]} decisions per variant in ${s} s`)
  }
  return rows
}
