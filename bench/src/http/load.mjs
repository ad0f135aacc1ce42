// Section 2: HTTP req/s and p99 with autocannon. Each server runs in its own child process;
// autocannon runs in this process, so load generator and server never share an event loop.
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { HTTP_MODES } from '../config.mjs'
import { serverCpuUs } from '../redis-stats.mjs'
import { median } from '../stats.mjs'
import { limitsRequests, VARIANTS } from './variants.mjs'

const SERVER = fileURLToPath(new URL('./server.mjs', import.meta.url))

function startServer(config) {
  const child = spawn(process.execPath, [SERVER, JSON.stringify(config)], {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  })
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('server did not start within 15 s')), 15_000)
    createInterface({ input: child.stdout }).once('line', (line) => {
      clearTimeout(timer)
      resolve(JSON.parse(line))
    })
    // 'close' (not 'exit') fires after stdout is drained, so a last line is never lost.
    child.once('close', (code) => {
      clearTimeout(timer)
      reject(new Error(`server exited with code ${code} before it was ready`))
    })
  })
  return { child, ready }
}

// The server process's own CPU time so far (µs): it answers over the IPC channel.
function processCpuUs(child) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('server did not report its CPU time')), 5000)
    child.once('message', (message) => {
      clearTimeout(timer)
      resolve(message.cpuUs)
    })
    child.send('cpu')
  })
}

function stopServer(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const timer = setTimeout(() => child.kill('SIGKILL'), 2000)
    child.once('exit', () => {
      clearTimeout(timer)
      resolve()
    })
    child.kill('SIGTERM')
  })
}

function load(port, { connections, durationS }) {
  return autocannon({
    url: `http://127.0.0.1:${port}/`,
    connections,
    duration: durationS,
    pipelining: 1,
  })
}

/**
 * The (framework, variant, mode) runs for this profile; "bare" and the floor run once, they have
 * no limits.
 */
function plan(profile) {
  const runs = []
  for (const [framework, variants] of Object.entries(VARIANTS)) {
    if (profile.http.frameworks && !profile.http.frameworks.includes(framework)) continue
    for (const variant of Object.keys(variants)) {
      const limits = limitsRequests(variant)
      const peer = limits && !variant.startsWith('ours/')
      if (peer && profile.http.peers !== 'all' && !profile.http.peers.includes(variant)) continue
      for (const mode of limits ? profile.http.modes : ['pass']) {
        runs.push({ framework, variant, mode, results: [], skip: undefined })
      }
    }
  }
  return runs
}

/** Runs every HTTP variant `profile.http.reps` times (interleaved) and returns medians. */
export async function runHttp({ profile, port, admin, log, algorithm }) {
  const runs = plan(profile)
  for (let rep = 1; rep <= profile.http.reps; rep++) {
    for (const run of runs) {
      if (run.skip) continue
      await admin.flushdb()
      const { limit, windowMs } = HTTP_MODES[run.mode]
      const config = {
        framework: run.framework,
        variant: run.variant,
        limit,
        windowMs,
        algorithm,
        redisPort: port,
      }
      const { child, ready } = startServer(config)
      try {
        const status = await ready
        if (status.skip) {
          run.skip = status.skip
          log(
            `  ${run.framework.padEnd(8)} ${run.variant.padEnd(30)} skipped: ${status.skip.split('\n')[0]}`,
          )
          continue
        }
        await load(status.port, {
          connections: profile.http.connections,
          durationS: profile.http.warmupS,
        })
        const cpuBefore = await processCpuUs(child)
        const redisBefore = await serverCpuUs(admin)
        const r = await load(status.port, profile.http)
        const cpuUs = (await processCpuUs(child)) - cpuBefore
        const redisUs = (await serverCpuUs(admin)) - redisBefore
        const result = {
          perSecond: r.requests.total / r.duration,
          // CPU per request: the server's process, and Redis's (idle for memory variants).
          // Steadier than req/s when load generator and server share the cores.
          cpuUsPerRequest: r.requests.total === 0 ? Number.NaN : cpuUs / r.requests.total,
          redisCpuUsPerRequest: r.requests.total === 0 ? Number.NaN : redisUs / r.requests.total,
          p50Ms: r.latency.p50,
          p99Ms: r.latency.p99,
          non2xxShare: r.requests.total === 0 ? 0 : r.non2xx / r.requests.total,
          errors: r.errors + r.timeouts,
        }
        run.results.push(result)
        log(
          `  rep ${rep}/${profile.http.reps}  ${run.framework.padEnd(8)} ${run.variant.padEnd(30)} ${run.mode.padEnd(8)} ${Math.round(result.perSecond)} req/s  p99 ${result.p99Ms} ms  server CPU ${result.cpuUsPerRequest.toFixed(1)} µs/req`,
        )
      } catch (error) {
        run.skip = `failed: ${error.message}`
        log(`  ${run.framework.padEnd(8)} ${run.variant.padEnd(30)} ${run.skip}`)
      } finally {
        await stopServer(child)
      }
    }
  }
  return runs.map(({ framework, variant, mode, results, skip }) => ({
    framework,
    variant,
    mode,
    skip,
    perSecond: median(results.map((r) => r.perSecond)),
    cpuUsPerRequest: median(results.map((r) => r.cpuUsPerRequest)),
    redisCpuUsPerRequest: median(results.map((r) => r.redisCpuUsPerRequest)),
    p50Ms: median(results.map((r) => r.p50Ms)),
    p99Ms: median(results.map((r) => r.p99Ms)),
    non2xxShare: median(results.map((r) => r.non2xxShare)),
    errors: results.reduce((a, r) => a + r.errors, 0),
  }))
}
