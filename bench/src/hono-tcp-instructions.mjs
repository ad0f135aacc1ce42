// Dev helper: instructions per request of a Hono server over real TCP (issue 26). The server runs
// under callgrind; autocannon (this process, 16 connections) sends it `warm` requests, its
// counters are zeroed (callgrind_control -z), then `n` more: "Collected" / n is what one request
// costs the server, start-up and warm-up left out.
//   node src/hono-tcp-instructions.mjs [--variants=bare,floor,ours,ours-noheaders,hrl]
//     [--warm=2000] [--n=5000] [--base=<worktree>]
// `--base`: also `base` and `base-noheaders`, another checkout's packages/hono (built).
// Variants: bare Hono; the floor (two `c.header()` calls); ours with default options and with
// `headers: false`; hono-rate-limiter with its defaults; all on their memory stores, never limiting.
// `--serve=<variant>` is the server process itself (what runs under valgrind).
import { spawn } from 'node:child_process'
import { pathToFileURL } from 'node:url'

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v = 'true'] = a.replace(/^--/, '').split('=')
    return [k, v]
  }),
)
const here = new URL('../../', import.meta.url).pathname
const LIMIT = 1_000_000_000

async function limiterOf(variant) {
  const root = variant.startsWith('base') ? args.base : here
  if (variant === 'bare') return undefined
  if (variant === 'floor') {
    const { getConnInfo } = await import('@hono/node-server/conninfo')
    let left = LIMIT
    return async (c, next) => {
      c.header('RateLimit-Policy', '"floor1000000000/1m";q=1000000000;w=60')
      c.header(
        'RateLimit',
        `"floor1000000000/1m";r=${--left};t=60;${getConnInfo(c).remote.address}`,
      )
      await next()
    }
  }
  if (variant === 'hrl') {
    const { rateLimiter } = await import('hono-rate-limiter')
    const { getConnInfo } = await import('@hono/node-server/conninfo')
    return rateLimiter({
      windowMs: 60_000,
      limit: LIMIT,
      keyGenerator: (c) => getConnInfo(c).remote.address ?? '',
    })
  }
  const { rateLimit } = await import(pathToFileURL(`${root}/packages/hono/dist/index.mjs`).href)
  const options = { limit: LIMIT, window: 60_000 }
  if (variant.endsWith('-noheaders')) options.headers = false
  return rateLimit(options)
}

async function serve(variant) {
  const { Hono } = await import('hono')
  const { serve: listen } = await import('@hono/node-server')
  const app = new Hono()
  const limiter = await limiterOf(variant)
  if (limiter) app.use(limiter)
  app.get('/', (c) => c.text('ok'))
  process.on('SIGTERM', () => process.exit(0))
  listen({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
    process.stdout.write(`${JSON.stringify({ port: info.port })}\n`),
  )
}

const run = (cmd, argv) =>
  new Promise((resolve) => spawn(cmd, argv, { stdio: 'ignore' }).on('exit', resolve))

// One server under callgrind: `warm` requests, its counters zeroed (callgrind_control -z), then
// `amount` requests: "Collected" / `amount`, start-up and warm-up left out.
async function perRequest(variant, warm, amount) {
  const { default: autocannon } = await import('autocannon')
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--callgrind-out-file=/dev/null',
      'node',
      new URL(import.meta.url).pathname,
      `--serve=${variant}`,
      ...(args.base ? [`--base=${args.base}`] : []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let stderr = ''
  child.stderr.on('data', (d) => {
    stderr += d
  })
  const port = await new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      const line = out.split('\n').find((l) => l.startsWith('{'))
      if (line) resolve(JSON.parse(line).port)
    })
    child.on('exit', () => reject(new Error(`server exited: ${stderr}`)))
  })
  const url = `http://127.0.0.1:${port}/`
  await autocannon({ url, connections: 16, amount: warm })
  // callgrind_control leaves its command for the server, which picks it up when the load starts
  const zeroed = run('callgrind_control', ['-z', String(child.pid)])
  await new Promise((resolve) => setTimeout(resolve, 5000))
  const result = await autocannon({ url, connections: 16, amount })
  await zeroed
  const exited = new Promise((resolve) => child.on('exit', resolve))
  child.kill('SIGTERM')
  await exited
  const m = /Collected\s*:\s*(\d+)/.exec(stderr)
  if (!m) throw new Error(`no count: ${stderr}`)
  return { per: Number(m[1]) / amount, ok: result['2xx'] }
}

async function main() {
  if (args.serve) return serve(args.serve)
  const warm = Number(args.warm ?? 2000)
  const n = Number(args.n ?? 5000)
  const names = (args.variants ?? 'bare,floor,ours,ours-noheaders,hrl').split(',')
  if (args.base && !args.variants) names.push('base', 'base-noheaders')
  for (const name of names) {
    const { per, ok } = await perRequest(name, warm, n)
    console.log(`${name.padEnd(16)} ${(per / 1000).toFixed(1)}k instructions/request (2xx ${ok})`)
  }
}
await main()
