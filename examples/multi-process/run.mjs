// Starts N Express worker processes on one Redis, fires a burst of requests at all of them at
// once, and checks that together they admitted exactly the limit: one counter, held across
// processes. Uses REDIS_URL if set; otherwise starts a private redis-server on a free port.
import { fork, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'

const WORKERS = Number(process.env.WORKERS ?? 3)
const LIMIT = Number(process.env.LIMIT ?? 50)
const PER_WORKER = Number(process.env.PER_WORKER ?? 40)
const PREFIX = `rl:multi-process:${process.pid}:` // fresh counters every run

const children = new Set() // every process this script started, stopped by pid at the end
const dirs = new Set() // and every directory it made

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

async function startRedis() {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'limiter-example-redis-'))
  dirs.add(dir)
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']
  const child = spawn('redis-server', [...args, '--dir', dir], { stdio: 'ignore' })
  children.add(child)
  const failed = once(child, 'error').then(([error]) => {
    throw error.code === 'ENOENT'
      ? new Error('redis-server is not on PATH: install it, or set REDIS_URL to a Redis to use')
      : error
  })
  const url = `redis://127.0.0.1:${port}`
  const client = new Redis(url, { lazyConnect: true, retryStrategy: () => null })
  client.on('error', () => {})
  const ready = (async () => {
    for (let i = 0; i < 100; i++) {
      try {
        await client.connect()
        await client.ping()
        return
      } catch {
        await sleep(50)
      }
    }
    throw new Error(`redis-server on port ${port} did not start within 5 s`)
  })()
  try {
    await Promise.race([ready, failed])
  } finally {
    client.disconnect()
  }
  return url
}

function startWorker(redisUrl) {
  const child = fork(new URL('./worker.mjs', import.meta.url), {
    env: { ...process.env, REDIS_URL: redisUrl, LIMIT: String(LIMIT), PREFIX, PORT: '0' },
  })
  children.add(child)
  return new Promise((resolve, reject) => {
    child.once('message', ({ port }) => resolve({ pid: child.pid, port }))
    child.once('exit', (code) => reject(new Error(`worker ${child.pid} exited early (${code})`)))
  })
}

async function stopAll() {
  await Promise.all(
    [...children].map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = once(child, 'exit')
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 2000)
      await exited
      clearTimeout(timer)
    }),
  )
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
}

async function main() {
  const own = process.env.REDIS_URL === undefined
  try {
    const url = own ? await startRedis() : process.env.REDIS_URL
    const workers = await Promise.all(Array.from({ length: WORKERS }, () => startWorker(url)))
    console.log(
      `${WORKERS} Express workers on one Redis (${own ? `our own redis-server, ${url}` : 'REDIS_URL'})`,
    )
    console.log(`global limit: ${LIMIT} per minute per client IP, the same definition in each`)
    console.log(
      `burst: ${PER_WORKER} requests at each worker at once, ${WORKERS * PER_WORKER} in all\n`,
    )

    // Interleaved, all in flight at once: worker 1, 2, 3, 1, 2, 3, ...
    const requests = Array.from({ length: PER_WORKER * WORKERS }, async (_, i) => {
      const response = await fetch(`http://127.0.0.1:${workers[i % WORKERS].port}/`)
      await response.arrayBuffer()
      return { worker: i % WORKERS, status: response.status }
    })
    const counts = workers.map(() => ({ allowed: 0, limited: 0 }))
    for (const { worker, status } of await Promise.all(requests)) {
      if (status === 200) counts[worker].allowed++
      else if (status === 429) counts[worker].limited++
    }

    workers.forEach(({ pid, port }, i) => {
      const { allowed, limited } = counts[i]
      console.log(
        `  worker ${i + 1} (pid ${pid}, port ${port}): ${allowed} allowed, ${limited} limited`,
      )
    })
    const total = counts.reduce((sum, c) => sum + c.allowed, 0)
    const ok = total === LIMIT
    console.log(`  total: ${total} allowed, limit ${LIMIT}: ${ok ? 'exact' : 'MISMATCH'}`)

    const redis = new Redis(url)
    const keys = []
    for await (const batch of redis.scanStream({ match: `${PREFIX}*` })) keys.push(...batch)
    await redis.quit()
    console.log(`\nthe one shared state in Redis (sliding-log keeps one log per client):`)
    for (const key of keys.sort()) console.log(`  ${key}`)
    if (!ok) process.exitCode = 1
  } finally {
    await stopAll()
  }
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    stopAll().finally(() => process.exit(130))
  })
}

await main()
