// Section 2's Hono rows by the paired method (bench/src/hono-micro.mjs in a child process): every
// request through @hono/node-server's own listener on an in-memory socket, so what is timed is the
// server's CPU for each request, with no load generator or kernel beside it. Variants run in
// interleaved rounds; a variant's cost over the floor is the median (and quartiles) of its paired
// differences, round r's time minus the floor's in round r, so a drift of the machine between
// rounds cancels. Memory and Redis, each side on its default headers and like-for-like (both
// draft-6, ours fixed-window as hono-rate-limiter counts).
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { median } from '../stats.mjs'

const MICRO = fileURLToPath(new URL('../hono-micro.mjs', import.meta.url))
const VARIANTS = ['bare', 'floor', 'ours/pass', 'hrl/pass', 'ours/limited', 'hrl/limited']
const SETUPS = [
  { store: 'memory', headers: 'default', args: [] },
  {
    store: 'memory',
    headers: 'draft-6 both',
    args: ['--headers=draft-6', '--algorithm=fixed-window'],
  },
  { store: 'redis', headers: 'default', args: [] },
  {
    store: 'redis',
    headers: 'draft-6 both',
    args: ['--headers=draft-6', '--algorithm=fixed-window'],
  },
]
// requests per round and rounds: the full profile's, or the quick one's
const SIZES = { full: { n: 10_000, reps: 11 }, quick: { n: 2_000, reps: 5 } }
const INFLIGHT = 16

function micro(args) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [MICRO, ...args], { maxBuffer: 1 << 24 }, (error, stdout) => {
      if (error) reject(error)
      else resolve(JSON.parse(stdout.trim().split('\n').at(-1)))
    })
  })
}

// The q-quantile (nearest rank) of a list of numbers.
function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
}

// One row per limiter variant: its median, and its paired difference to the floor.
function rows(setup, out) {
  const { times, redisTimes, statuses } = out
  return VARIANTS.filter((v) => v !== 'bare' && v !== 'floor').map((variant) => {
    const over = times[variant].map((t, r) => t - times.floor[r])
    const [who, mode] = variant.split('/')
    // ours minus hono-rate-limiter in the same round (on ours's row only)
    const vs = who === 'ours' ? times[variant].map((t, r) => t - times[`hrl/${mode}`][r]) : []
    return {
      store: setup.store,
      headers: setup.headers,
      limiter: who === 'ours' ? 'ours' : 'hono-rate-limiter',
      mode: mode === 'limited' ? 'limited' : 'pass',
      status: statuses[variant],
      cpuUs: median(times[variant]),
      bareUs: median(times.bare),
      floorUs: median(times.floor),
      overFloor: median(over),
      overFloorQ1: quantile(over, 0.25),
      overFloorQ3: quantile(over, 0.75),
      redisCpuUs: setup.store === 'redis' ? median(redisTimes[variant]) : Number.NaN,
      vsTheirs: vs.length === 0 ? undefined : [median(vs), quantile(vs, 0.25), quantile(vs, 0.75)],
    }
  })
}

/** Runs the paired Hono comparison; returns its rows (see {@link rows}). */
export async function runHonoPaired({ profile, port, admin, log }) {
  const { n, reps } = SIZES[profile.name] ?? SIZES.full
  const all = []
  for (const setup of SETUPS) {
    if (setup.store === 'redis') await admin.flushdb()
    const args = [`--n=${n}`, `--reps=${reps}`, `--inflight=${INFLIGHT}`, '--json', ...setup.args]
    args.push(`--only=${VARIANTS.join(',')}`)
    if (setup.store === 'redis') args.push(`--redis-port=${port}`)
    try {
      const got = rows(setup, await micro(args))
      for (const r of got)
        log(
          `  hono paired ${r.store.padEnd(6)} ${r.headers.padEnd(12)} ${r.limiter.padEnd(17)} ${r.mode.padEnd(7)} over floor ${r.overFloor.toFixed(2)} µs [${r.overFloorQ1.toFixed(2)}, ${r.overFloorQ3.toFixed(2)}]${r.vsTheirs ? `  ours minus theirs ${r.vsTheirs.map((x) => x.toFixed(2)).join(' ')}` : ''}`,
        )
      all.push(...got)
    } catch (error) {
      log(`  hono paired ${setup.store} ${setup.headers}: failed: ${error.message.split('\n')[0]}`)
    }
  }
  return { n, reps, inflight: INFLIGHT, rows: all }
}

const signed = (x) => (Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${x.toFixed(2)}` : '-')

/** The paired Hono rows as a markdown table, with a line on what they say. */
export function honoPairedSection(paired) {
  if (paired === undefined || paired.rows.length === 0) return '_Not run._'
  const head =
    '| store | headers | limiter | limits | status | server CPU µs/req | over floor: median [q1, q3] | Redis CPU µs/req |'
  const lines = [head, head.replace(/[^|]+/g, ' --- ')]
  for (const r of paired.rows)
    lines.push(
      `| ${r.store} | ${r.headers} | ${r.limiter === 'ours' ? '**ours**' : r.limiter} | ${r.mode} | ${r.status} | ${r.cpuUs.toFixed(2)} | ${signed(r.overFloor)} [${signed(r.overFloorQ1)}, ${signed(r.overFloorQ3)}] | ${Number.isFinite(r.redisCpuUs) ? r.redisCpuUs.toFixed(2) : '-'} |`,
    )
  const verdicts = []
  for (const r of paired.rows) {
    if (r.vsTheirs === undefined) continue
    const [mid, q1, q3] = r.vsTheirs
    // ours minus theirs, round by round: a side is cheaper when the whole middle half says so
    const verdict =
      q3 < 0 ? 'ours cheaper' : q1 > 0 ? 'hono-rate-limiter cheaper' : 'not told apart'
    verdicts.push(
      `${r.store}/${r.headers}/${r.mode}: ${verdict} (ours minus theirs ${signed(mid)} [${signed(q1)}, ${signed(q3)}] µs)`,
    )
  }
  return `${lines.join('\n')}\n\nVerdicts (ours minus hono-rate-limiter in the same round: median [q1, q3]): ${verdicts.join('; ')}.`
}
