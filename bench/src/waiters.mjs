// Section 9: waiters for a concurrency slot. 1,000 run() calls at once on one key at limit 2,
// each holding its slot 1 ms: store decisions (on `limiter:decision`), script calls on Redis
// (`INFO commandstats`, EVALSHA: decisions and releases, batched) and wall time, in one process
// (memory and Redis), then with 2 and 4 processes sharing the key on Redis.
import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { callsDelta, commandCalls } from './redis-stats.mjs'
import { median } from './stats.mjs'
import { runWaiters, waitersLimiter } from './waiters-child.mjs'

const CORE = fileURLToPath(new URL('../../packages/core/dist/index.mjs', import.meta.url))
const CHILD = fileURLToPath(new URL('./waiters-child.mjs', import.meta.url))
/** What section 9 runs: calls per process, the limit, how long each holds its slot. */
export const WAITERS = { calls: 1000, limit: 2, holdMs: 1, processes: [2, 4] }
let keys = 0
const nextKey = () => `waiters:${process.pid}:${keys++}`

// The run's script calls on the bench's Redis (0 in memory).
async function scripted(admin, port, run) {
  const before = port === undefined ? undefined : await commandCalls(admin)
  const result = await run()
  if (before === undefined) return { ...result, evalsha: 0 }
  const delta = callsDelta(before, await commandCalls(admin))
  return { ...result, evalsha: (delta.evalsha ?? 0) + (delta.eval ?? 0) }
}

/** One process: `calls` run() calls in this process (`core`: another build's dist/index.mjs). */
export async function alone(admin, port, core = CORE) {
  const { limiter, close } = await waitersLimiter({ core, port, limit: WAITERS.limit })
  try {
    return await scripted(admin, port, async () => {
      const r = await runWaiters(limiter, { ...WAITERS, key: nextKey() })
      return { ...r, processes: 1 }
    })
  } finally {
    await close()
  }
}

/** `processes` children sharing one key on Redis, started together once all are connected. */
export async function shared(admin, port, processes, core = CORE) {
  const options = JSON.stringify({ core, port, ...WAITERS, key: nextKey() })
  const children = Array.from({ length: processes }, () =>
    fork(CHILD, [options], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
  )
  const message = (child) =>
    new Promise((resolve, reject) => {
      child.once('message', resolve)
      child.once('exit', (code) => reject(new Error(`waiters child exited with ${code}`)))
    })
  try {
    await Promise.all(children.map(message))
    return await scripted(admin, port, async () => {
      const results = children.map(message)
      for (const child of children) child.send('go')
      const all = await Promise.all(results)
      const sum = (name) => all.reduce((n, r) => n + r[name], 0)
      return {
        processes,
        decisions: sum('decisions'),
        served: sum('served'),
        refused: sum('refused'),
        wallMs: Math.max(...all.map((r) => r.wallMs)),
        maxInFlight: Math.max(...all.map((r) => r.maxInFlight)),
      }
    })
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill()
  }
}

// The median repetition of one case (by wall time), with every repetition's figures.
function summary(store, runs) {
  const mid = [...runs].sort((a, b) => a.wallMs - b.wallMs)[Math.floor(runs.length / 2)]
  const calls = mid.processes * WAITERS.calls
  return {
    store,
    ...mid,
    calls,
    decisionsPerCall: mid.decisions / calls,
    evalshaPerCall: mid.evalsha / calls,
    wallMsMedian: median(runs.map((r) => r.wallMs)),
    runs,
  }
}

/** Section 9: one row per case, medians of `profile.reps` repetitions, interleaved. */
export async function runWaitersSection({ profile, port, admin, log }) {
  const cases = [
    ['memory', () => alone(admin, undefined)],
    ['redis', () => alone(admin, port)],
    ...WAITERS.processes.map((n) => ['redis', () => shared(admin, port, n)]),
  ]
  const runs = cases.map(() => [])
  for (let rep = 0; rep < profile.reps; rep++) {
    for (const [i, [, run]] of cases.entries()) runs[i].push(await run())
  }
  const rows = cases.map(([store], i) => summary(store, runs[i]))
  for (const r of rows)
    log(
      `  ${r.store} x${r.processes}: ${r.decisionsPerCall.toFixed(2)} decisions and ${r.evalshaPerCall.toFixed(2)} EVALSHA per run(), ${Math.round(r.wallMsMedian)} ms for ${r.calls} calls`,
    )
  return rows
}
