// `pnpm demo`: an Express app in this process with one route per algorithm, a burst of
// requests at each, and a table of what came back. MemoryStore by default; REDIS_URL for Redis.
import { randomBytes } from 'node:crypto'
import { createRequire } from 'node:module'
import { MemoryStore, RedisStore, rateLimit } from '@limiter/express'
import express from 'express'
import { Redis } from 'ioredis'

const LIMIT = 5
const WINDOW = '10s'
const REQUESTS = 8
const ROUTES = [
  {
    algorithm: 'fixed-window',
    about: 'at most 5 per window; the window opens at the first request',
  },
  {
    algorithm: 'sliding-window',
    about: 'weighted two-window estimate, windows aligned to the clock',
  },
  { algorithm: 'sliding-log', about: 'exact: at most 5 in any 10 s, one log entry per request' },
  { algorithm: 'token-bucket', burst: 3, about: 'holds 3 tokens, gains one every 2 s' },
  { algorithm: 'leaky-bucket', about: 'holds 5, drains one every 2 s' },
  { algorithm: 'gcra', burst: 3, about: 'bursts of 3, then one every 2 s' },
]

// Never hang: whatever goes wrong, the demo ends.
setTimeout(() => {
  console.error('demo: still running after 20 s, giving up')
  process.exit(1)
}, 20_000).unref()

// `pnpm demo | head` closes stdout early: that is not a failure.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(0)
  throw error
})

const color = process.stdout.isTTY && !process.env.NO_COLOR
const paint = (code) => (text) => (color ? `\x1b[${code}m${text}\x1b[0m` : text)
const bold = paint('1')
const dim = paint('2')
const green = paint('32')
const red = paint('31')

async function connectRedis(url) {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 2000,
    retryStrategy: () => null,
  })
  redis.on('error', () => {}) // reported by connect() below
  try {
    await redis.connect()
    return redis
  } catch (error) {
    redis.disconnect()
    console.error(`demo: cannot reach Redis at ${url}: ${error.message}`)
    process.exit(1)
  }
}

function buildApp(store, prefix, onError) {
  const app = express()
  for (const { algorithm, burst } of ROUTES) {
    const policy = { limit: LIMIT, window: WINDOW, algorithm, ...(burst ? { burst } : {}) }
    app.get(
      `/${algorithm}`,
      rateLimit({ ...policy, name: algorithm, prefix, store, onError }),
      (_req, res) => {
        res.send('ok\n')
      },
    )
  }
  return app
}

async function burst(base, algorithm) {
  const results = []
  for (let i = 0; i < REQUESTS; i++) {
    const response = await fetch(`${base}/${algorithm}`)
    results.push({
      status: response.status,
      headers: response.headers,
      body: await response.text(),
    })
  }
  return results
}

function report({ algorithm, burst: burstSize, about }, results) {
  const allowed = results.filter((r) => r.status === 200).length
  const limited = results.filter((r) => r.status === 429).length
  const marks = results.map((r) => (r.status === 200 ? green('✓') : red('✗'))).join('')
  const policy = `${LIMIT} per ${WINDOW}${burstSize ? `, burst ${burstSize}` : ''}`
  const first = results.find((r) => r.status === 429)
  const counts = `${green(`${allowed} allowed`)}, ${red(`${limited} limited`)}`
  const lines = [
    `${bold(algorithm.padEnd(15))} ${policy.padEnd(20)} ${dim(about)}`,
    `  ${marks}  ${counts}${first ? '; the first 429 said:' : ''}`,
  ]
  if (first) {
    const field = (name, value) => `    ${dim(`${name}:`.padEnd(18))}${value}`
    let detail = first.body
    try {
      detail = JSON.parse(first.body).detail
    } catch {}
    for (const name of ['RateLimit-Policy', 'RateLimit', 'Retry-After']) {
      lines.push(field(name, first.headers.get(name)))
    }
    lines.push(field('body.detail', detail))
  }
  return lines.join('\n')
}

async function main() {
  const url = process.env.REDIS_URL
  const redis = url ? await connectRedis(url) : undefined
  const store = redis ? new RedisStore({ client: redis }) : new MemoryStore()
  // A fresh prefix per run, so a second run on the same Redis does not inherit the first's counts.
  const prefix = redis ? `rl:demo:${randomBytes(4).toString('hex')}:` : 'rl:'
  const where = redis
    ? `RedisStore on ${url.replace(/\/\/[^@/]*@/, '//***@')}`
    : 'MemoryStore (in process)'

  // A store failure would let requests through (failureMode 'open'): say so, do not hide it.
  const storeErrors = []
  const server = buildApp(store, prefix, (error) => storeErrors.push(error)).listen(0, '127.0.0.1')
  await new Promise((resolve, reject) => server.once('listening', resolve).once('error', reject))
  const base = `http://127.0.0.1:${server.address().port}`
  const expressVersion = createRequire(import.meta.url)('express/package.json').version

  try {
    console.log(`${bold('limiter demo')}: Express ${expressVersion} on ${base}, ${where}`)
    console.log(dim(`${REQUESTS} requests per route, one after another, from one client\n`))
    let sample
    for (const route of ROUTES) {
      const results = await burst(base, route.algorithm)
      sample ??= results.find((r) => r.status === 429)
      console.log(`${report(route, results)}\n`)
    }
    if (sample) {
      console.log(
        `${dim(`every 429 body is an RFC 9457 problem (${sample.headers.get('content-type')}), e.g.:`)}`,
      )
      console.log(sample.body)
    }
    if (storeErrors.length > 0) {
      console.error(red(`demo: ${storeErrors.length} store errors, e.g. ${storeErrors[0].message}`))
      process.exitCode = 1
    }
  } finally {
    server.close()
    server.closeAllConnections()
    await redis?.quit()
  }
}

await main()
