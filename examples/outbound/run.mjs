// Several worker processes call one "third-party API" through one shared limiter on Redis. The
// API (a local HTTP server started here) allows QUOTA calls per second, checked over a sliding
// second, and answers 429 beyond it. Prints what the API served and refused, and the rate
// achieved; exits 1 on any 429, or below SHARE - 1% of the quota (95% by default). Uses REDIS_URL if set; otherwise
// starts a private redis-server on a free port.
import { fork } from 'node:child_process'
import { createServer } from 'node:http'
import { children, startRedis, stopAll } from '../shared/processes.mjs'

const WORKERS = Number(process.env.WORKERS ?? 4)
const CALLERS = Number(process.env.CALLERS ?? 8) // concurrent callers per worker
const QUOTA = Number(process.env.QUOTA ?? 100) // the API's calls per second
const SECONDS = Number(process.env.SECONDS ?? 5)
// the share of the quota the limiter allows: the margin absorbs network and timer jitter
const SHARE = Number(process.env.SHARE ?? 0.95)
const PREFIX = `rl:outbound:${process.pid}:` // fresh state every run

// The partner API: at most QUOTA calls in any second, (now - 1000 ms, now]; beyond that, 429.
function startUpstream() {
  const served = [] // arrival times of the calls it served
  const stats = { served: 0, refused: 0 }
  const server = createServer((req, res) => {
    // a worker's first call opens its connection: not a call to the API
    if (req.url === '/warm-up') return res.end()
    const now = performance.now()
    while (served.length > 0 && served[0] <= now - 1000) served.shift()
    if (served.length >= QUOTA) {
      stats.refused++
      res.writeHead(429, { 'retry-after': '1' }).end()
      return
    }
    served.push(now)
    stats.served++
    stats.first ??= now
    stats.last = now
    res.end('ok')
  })
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({ server, stats, port: server.address().port }))
  })
}

// A worker, once warmed up; `go(start, deadline)` sets it off, and `done` is its counts.
function startWorker(env) {
  const child = fork(new URL('./worker.mjs', import.meta.url), { env: { ...process.env, ...env } })
  children.add(child)
  const exited = new Promise((_, reject) => {
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`worker ${child.pid} exited with ${code}`))
    })
  })
  const message = () =>
    Promise.race([new Promise((resolve) => child.once('message', resolve)), exited])
  return message().then(() => ({
    go: (start, deadline) => {
      child.send({ start, deadline })
      return message()
    },
  }))
}

async function main() {
  const own = process.env.REDIS_URL === undefined
  const upstream = await startUpstream()
  try {
    const url = own ? await startRedis() : process.env.REDIS_URL
    console.log(
      `${WORKERS} workers x ${CALLERS} callers -> one API allowing ${QUOTA} calls per second, for ${SECONDS} s (${own ? 'our own redis-server' : 'REDIS_URL'})`,
    )
    const workers = await Promise.all(
      Array.from({ length: WORKERS }, () =>
        startWorker({
          REDIS_URL: url,
          UPSTREAM: `http://127.0.0.1:${upstream.port}/`,
          QUOTA: String(QUOTA),
          SHARE: String(SHARE),
          CALLERS: String(CALLERS),
          PREFIX,
        }),
      ),
    )
    // every worker up and warmed up: all start together
    const start = Date.now() + 100
    const reports = await Promise.all(workers.map((w) => w.go(start, start + SECONDS * 1000)))
    const { stats } = upstream
    const seconds = (stats.last - stats.first) / 1000
    // served calls over the time they took, as a share of the quota (the first call opens it)
    const rate = seconds > 0 ? (stats.served - 1) / seconds : 0
    const used = rate / QUOTA
    const calls = reports.reduce((sum, r) => sum + r.calls, 0)
    console.log(`  workers made ${calls} calls: ${reports.map((r) => r.calls).join(' + ')}`)
    console.log(`  the API served ${stats.served} and answered 429 to ${stats.refused}`)
    console.log(
      `  achieved ${rate.toFixed(1)} calls/s of ${QUOTA} allowed: ${(used * 100).toFixed(1)}% of the quota`,
    )
    const result = { served: stats.served, refused: stats.refused, rate, used }
    console.log(`RESULT ${JSON.stringify(result)}`)
    // the limiter allows SHARE of the quota: it should use nearly all of that
    if (stats.refused > 0 || used < SHARE - 0.01) process.exitCode = 1
  } finally {
    upstream.server.close()
    await stopAll()
  }
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    stopAll().finally(() => process.exit(130))
  })
}

await main()
