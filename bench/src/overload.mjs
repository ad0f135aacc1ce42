// Section 10: overload. A server with a CPU-bound or an I/O-bound handler, each contender in
// its own child process, and a load generator in another: first the server's capacity (closed
// loop, no protection), then open-loop load at multiples of it, 20% critical and 80% low.
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { OVERLOAD, WORKLOADS } from './overload-settings.mjs'

const SERVER = fileURLToPath(new URL('./overload-server.mjs', import.meta.url))
const LOAD = fileURLToPath(new URL('./overload-load.mjs', import.meta.url))

/** Starts `file` with `config`; resolves with the child and its lines of JSON output. */
function child(file, config) {
  const proc = spawn(process.execPath, [file, JSON.stringify(config)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const lines = []
  const waiters = []
  createInterface({ input: proc.stdout }).on('line', (line) => {
    let value
    try {
      value = JSON.parse(line)
    } catch {
      return
    }
    const waiter = waiters.shift()
    if (waiter) waiter(value)
    else lines.push(value)
  })
  const exited = new Promise((resolve) => proc.once('exit', resolve))
  const next = (timeoutMs) =>
    lines.length > 0
      ? Promise.resolve(lines.shift())
      : new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`${file}: no answer`)), timeoutMs)
          waiters.push((v) => {
            clearTimeout(timer)
            resolve(v)
          })
          exited.then(() => reject(new Error(`${file} exited`)))
        })
  return { proc, next, exited }
}

async function startServer(workload, contender) {
  const server = child(SERVER, { workload, contender, ...WORKLOADS[workload] })
  const { port } = await server.next(20_000)
  return {
    port,
    async stop() {
      server.proc.kill('SIGTERM')
      const counted = await server.next(5000).catch(() => ({}))
      await server.exited
      return counted
    },
  }
}

async function load(port, options) {
  const gen = child(LOAD, {
    port,
    criticalShare: OVERLOAD.criticalShare,
    warmupMs: OVERLOAD.warmupMs,
    measureMs: OVERLOAD.measureMs,
    timeoutMs: OVERLOAD.timeoutMs,
    ...options,
  })
  const totalMs =
    (options.warmupMs ?? OVERLOAD.warmupMs) + (options.measureMs ?? OVERLOAD.measureMs)
  const result = await gen.next(totalMs + OVERLOAD.timeoutMs + 30_000)
  await gen.exited
  return result
}

/** Max sustainable goodput (2xx/s) of the unprotected server, closed loop. */
async function capacity(workload) {
  const server = await startServer(workload, 'none')
  try {
    const r = await load(server.port, {
      mode: 'closed',
      connections: OVERLOAD.capacityConnections[workload],
      warmupMs: 1000,
      measureMs: OVERLOAD.capacityMs,
    })
    return { perSecond: r.low.ok / r.seconds, p50Ms: r.low.p50Ms, p99Ms: r.low.p99Ms }
  } finally {
    await server.stop()
  }
}

function row(workload, contender, multiplier, rate, cap, r, counted) {
  const ok = r.critical.ok + r.low.ok
  const goodput = ok / r.seconds
  return {
    workload,
    contender,
    multiplier,
    rate,
    capacity: cap,
    goodput,
    goodputShare: goodput / cap,
    criticalSuccess: r.critical.sent === 0 ? null : r.critical.ok / r.critical.sent,
    critical: r.critical,
    low: r.low,
    shed: r.critical.shed + r.low.shed,
    timeouts: r.critical.timeouts + r.low.timeouts,
    errors: r.critical.errors + r.low.errors + r.critical.other + r.low.other,
    unfinished: r.unfinished,
    lagP99Ms: r.lagP99Ms,
    lagMaxMs: r.lagMaxMs,
    generatorElu: r.generatorElu,
    adaptiveLimit: counted.adaptive ?? null,
  }
}

/** Runs the section; returns { capacity: { cpu, io }, rows }. */
export async function runOverload({ log }) {
  const result = { capacity: {}, rows: [] }
  for (const workload of Object.keys(WORKLOADS)) {
    const cap = await capacity(workload)
    result.capacity[workload] = cap
    log(`  ${workload}: capacity ${cap.perSecond.toFixed(0)} 2xx/s (closed loop)`)
    for (const multiplier of OVERLOAD.multipliers) {
      const rate = Math.round(cap.perSecond * multiplier)
      for (const contender of OVERLOAD.contenders) {
        const server = await startServer(workload, contender)
        let r
        let counted
        try {
          r = await load(server.port, { mode: 'open', rate })
        } finally {
          counted = await server.stop()
        }
        const line = row(workload, contender, multiplier, rate, cap.perSecond, r, counted)
        result.rows.push(line)
        log(
          `  ${workload} ${multiplier}x ${contender}: goodput ${(line.goodputShare * 100).toFixed(0)}% of capacity, ` +
            `critical ${(line.criticalSuccess * 100).toFixed(1)}% ok p99 ${line.critical.p99Ms?.toFixed(1)} ms, ` +
            `503 ${line.shed}, timeouts ${line.timeouts}, generator lag p99 ${r.lagP99Ms?.toFixed(1)} ms`,
        )
      }
    }
  }
  return result
}
