// Starts N Express worker processes on one Redis, fires a burst of requests at all of them at
// once, and checks that together they admitted exactly the limit: one counter, held across
// processes. Uses REDIS_URL if set; otherwise starts a private redis-server on a free port.
import { fork } from 'node:child_process'
import { Redis } from 'ioredis'
import { children, startRedis, stopAll } from '../shared/processes.mjs'

const WORKERS = Number(process.env.WORKERS ?? 3)
const LIMIT = Number(process.env.LIMIT ?? 50)
const PER_WORKER = Number(process.env.PER_WORKER ?? 40)
const PREFIX = `rl:multi-process:${process.pid}:` // fresh counters every run

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
