// Child process for the overload section: one server (a contender) with a CPU-bound or an
// I/O-bound handler on a free port of 127.0.0.1. Argument: JSON { workload, contender, cpuMs,
// ioMs, ioSlots }. Prints one JSON line {"port": n}, runs until SIGTERM, and then prints one
// JSON line with what the server counted ({ shed, state }).
//
// - cpu: `GET /work` spins the CPU for `cpuMs` (a busy loop on performance.now()), then answers.
// - io: `GET /work` waits for one of `ioSlots` slots of a simulated downstream (a FIFO queue
//   in front of it, as a connection pool has) and holds it `ioMs` (a timer): the downstream
//   serves at most ioSlots / ioMs requests per ms, whatever the process's CPU.
// The header `x-priority: critical` marks a critical request; anything else is low.
//
// Contenders: `none` (Express, no protection), `under-pressure` (Fastify with
// @fastify/under-pressure, fixed thresholds), `ours` (Express behind `shedFirst`, createShedder
// with priorities).
import { OURS_CPU, OURS_IO, OURS_QUEUE, UNDER_PRESSURE } from './overload-settings.mjs'

const config = JSON.parse(process.argv[2])
const { workload, contender, cpuMs, ioMs, ioSlots } = config

function spin(ms) {
  const end = performance.now() + ms
  let x = 0
  while (performance.now() < end) x++
  return x
}

// The downstream: `ioSlots` slots, each held `ioMs`; the rest wait in FIFO order. A caller whose
// client has gone (`gone()`) gives its turn up without holding a slot, as a pool drops a
// cancelled waiter: without that, requests the generator abandoned would keep the downstream
// busy after every contender had counted them done.
let busy = 0
const waiting = []
function downstream(gone) {
  return new Promise((resolve) => {
    const run = () => {
      if (gone()) {
        waiting.shift()?.()
        return resolve()
      }
      busy++
      setTimeout(() => {
        busy--
        waiting.shift()?.()
        resolve()
      }, ioMs)
    }
    if (busy < ioSlots) run()
    else waiting.push(run)
  })
}

const critical = (headers) => headers['x-priority'] === 'critical'

let shedder
let served = 0

// OVERLOAD_TRACE=<file>: every 100 ms, one line of the shedder's state and what was served
async function trace(prefix) {
  const file = `${prefix}-${Date.now()}.jsonl`
  const { appendFileSync, writeFileSync } = await import('node:fs')
  writeFileSync(file, '')
  const t0 = performance.now()
  let last = { served: 0, shed: 0, cpu: process.cpuUsage() }
  setInterval(() => {
    const s = shedder.state()
    const cpu = process.cpuUsage()
    const line = {
      t: Math.round(performance.now() - t0),
      level: s.level,
      elu: s.reading?.elu,
      delayMs: s.reading?.delayMs,
      queueMs: s.reading?.queueMs,
      inflight: s.inflight,
      served: served - last.served,
      shed: s.shed - last.shed,
      cpuMs: (cpu.user + cpu.system - last.cpu.user - last.cpu.system) / 1000,
    }
    last = { served, shed: s.shed, cpu }
    appendFileSync(file, `${JSON.stringify(line)}\n`)
  }, 100).unref()
}
async function expressApp() {
  const { default: createApp } = await import('express')
  const app = createApp()
  let listener = app
  if (contender === 'ours') {
    // the shedder asked before Express: a refusal costs Node's HTTP parsing only
    const { createShedder, shedFirst } = await import('@limiter/core/shed')
    // OVERLOAD_OURS / OVERLOAD_QUEUE=<json>: other settings for a tuning run
    const env = (name, fallback) => (process.env[name] ? JSON.parse(process.env[name]) : fallback)
    shedder = createShedder(env('OVERLOAD_OURS', workload === 'cpu' ? OURS_CPU : OURS_IO))
    listener = shedFirst(shedder, app, {
      priority: (req) => (critical(req.headers) ? 'critical' : 'low'),
      queue: env('OVERLOAD_QUEUE', OURS_QUEUE[workload]),
    })
    if (process.env.OVERLOAD_TRACE) trace(process.env.OVERLOAD_TRACE)
  }
  app.get('/work', async (req, res) => {
    if (workload === 'cpu') spin(cpuMs)
    else await downstream(() => req.socket.destroyed)
    served++
    res.send('ok')
  })
  const { createServer } = await import('node:http')
  const server = createServer(listener)
  server.listen(0, '127.0.0.1', () => listening(server.address().port))
  server.keepAliveTimeout = 30_000
}

async function fastifyApp() {
  const { default: Fastify } = await import('fastify')
  const { default: underPressure } = await import('@fastify/under-pressure')
  const app = Fastify({ logger: false, keepAliveTimeout: 30_000 })
  await app.register(underPressure, UNDER_PRESSURE)
  app.get('/work', async (request) => {
    if (workload === 'cpu') spin(cpuMs)
    else await downstream(() => request.raw.socket.destroyed)
    return 'ok'
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  listening(app.server.address().port)
}

function listening(port) {
  process.stdout.write(`${JSON.stringify({ port })}\n`)
}

process.on('SIGTERM', () => {
  const state = shedder?.state()
  process.stdout.write(
    `${JSON.stringify({ shed: state?.shed ?? null, adaptive: state?.adaptive?.limit ?? null })}\n`,
  )
  process.exit(0)
})

if (contender === 'under-pressure') await fastifyApp()
else await expressApp()
