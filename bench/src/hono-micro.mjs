// Dev helper: Hono middleware cost per request, in one process, without the network. Each request
// goes through @hono/node-server's own request listener (its lightweight Request and Response,
// as on a real server) with an in-memory socket, so what is timed is the server's work for one
// request: bare Hono, the floor (IP + two header fields), ours and hono-rate-limiter on their
// memory stores. Variants run interleaved, medians of `reps`; compare two builds side by side
// with `--base=<worktree>` (its packages/hono and packages/core built).
//   node src/hono-micro.mjs [--n=20000] [--reps=7] [--base=/tmp/hono-base] [--only=a,b]
//   [--headers=draft-6] [--algorithm=fixed-window]
// A `--cpu-prof` run of one variant: add `--profile=<variant>` (runs that one only). Instruction
// counts of one variant, start-up left out: `--profile=<variant> --count --n=<N>` under
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null node src/hono-micro.mjs ...
// at two N (3000 and 13000): the difference in "Collected" / 10000 is instructions per request.
import { IncomingMessage, ServerResponse } from 'node:http'
import { Duplex } from 'node:stream'
import { pathToFileURL } from 'node:url'

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v = 'true'] = a.replace(/^--/, '').split('=')
    return [k, v]
  }),
)
const N = Number(args.n ?? 20000)
const REPS = Number(args.reps ?? 7)
// process CPU time by default (steadier than wall time on a shared machine); `--wall` for wall
const metric = args.wall ? 'wallUs' : 'cpuUs'
const here = new URL('../../', import.meta.url).pathname

const { Hono } = await import('hono')
const { getRequestListener } = await import('@hono/node-server')
const { getConnInfo } = await import('@hono/node-server/conninfo')
const { rateLimiter } = await import('hono-rate-limiter')

async function ourModule(root) {
  return import(pathToFileURL(`${root}/packages/hono/dist/index.mjs`).href)
}

class NullSocket extends Duplex {
  remoteAddress = '127.0.0.1'
  remotePort = 40000
  encrypted = false
  _read() {}
  _write(_chunk, _enc, cb) {
    cb()
  }
  _writev(_chunks, cb) {
    cb()
  }
  setTimeout() {}
  setNoDelay() {}
  setKeepAlive() {}
}

const socket = new NullSocket()
socket.setMaxListeners(0)

// One request through `listener`, resolved when its response has ended.
function one(listener) {
  const req = new IncomingMessage(socket)
  req.method = 'GET'
  req.url = '/'
  req.headers = { host: '127.0.0.1' }
  req.rawHeaders = ['host', '127.0.0.1']
  req.httpVersionMajor = 1
  req.httpVersionMinor = 1
  req.httpVersion = '1.1'
  req.complete = true
  req.push(null)
  const res = new ServerResponse(req)
  res.assignSocket(socket)
  return new Promise((resolve) => {
    res.on('finish', () => {
      res.detachSocket(socket)
      resolve(res.statusCode)
    })
    listener(req, res)
  })
}

function app(middleware) {
  const a = new Hono()
  if (middleware) a.use(middleware)
  a.get('/', (c) => c.text('ok'))
  return getRequestListener(a.fetch)
}

const POLICY = '"floor1000000000/1m";q=1000000000;w=60'
let left = 1e9
const floor = async (c, next) => {
  c.header('RateLimit-Policy', POLICY)
  c.header('RateLimit', `"floor1000000000/1m";r=${--left};t=60;${getConnInfo(c).remote.address}`)
  await next()
}

const limit = (mode) => (mode === 'limited' ? 1 : 1e9)
const ourOptions = (mode) => {
  const o = { limit: limit(mode), window: 60_000 }
  if (args.headers) o.headers = args.headers
  if (args.algorithm) o.algorithm = args.algorithm
  return o
}
const hrl = (mode) =>
  rateLimiter({
    windowMs: 60_000,
    limit: limit(mode),
    standardHeaders: args['hrl-headers'] ?? 'draft-6',
    keyGenerator: (c) => getConnInfo(c).remote.address ?? '',
  })

const ours = await ourModule(here)
const base = args.base ? await ourModule(args.base) : undefined
const variants = {
  bare: () => app(),
  floor: () => app(floor),
}
for (const mode of ['pass', 'limited']) {
  variants[`ours/${mode}`] = () => app(ours.rateLimit(ourOptions(mode)))
  if (base) variants[`base/${mode}`] = () => app(base.rateLimit(ourOptions(mode)))
  variants[`hrl/${mode}`] = () => app(hrl(mode))
}
let names = Object.keys(variants)
if (args.only) names = names.filter((n) => args.only.split(',').includes(n))
if (args.profile) names = [args.profile]

const listeners = Object.fromEntries(names.map((n) => [n, variants[n]()]))
const times = Object.fromEntries(names.map((n) => [n, []]))
const statuses = {}

async function run(name, n) {
  const listener = listeners[name]
  const t0 = process.cpuUsage()
  const w0 = performance.now()
  for (let i = 0; i < n; i++) statuses[name] = await one(listener)
  const cpu = process.cpuUsage(t0)
  return { cpuUs: (cpu.user + cpu.system) / n, wallUs: ((performance.now() - w0) * 1000) / n }
}

if (args.count) {
  // instruction counts: one variant, N requests, nothing else (run at two N, take the difference)
  await run(names[0], N)
  console.error(`${names[0]} ${N} requests, last status ${statuses[names[0]]}`)
  process.exit(0)
}
for (const name of names) await run(name, Math.min(N, 5000)) // warm-up
for (let r = 0; r < REPS; r++)
  for (const name of names) times[name].push((await run(name, N))[metric])

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const bare = times.bare ? median(times.bare) : undefined
const flo = times.floor ? median(times.floor) : undefined
console.log(
  `n=${N} reps=${REPS} headers=${args.headers ?? 'default'} (µs per request, ${metric === 'cpuUs' ? 'process CPU' : 'wall'})`,
)
for (const name of names) {
  const m = median(times[name])
  const over = (b) => (b === undefined ? '' : `${m - b >= 0 ? '+' : ''}${(m - b).toFixed(2)}`)
  console.log(
    `${name.padEnd(14)} ${m.toFixed(2).padStart(7)}  over bare ${over(bare).padStart(7)}  over floor ${over(flo).padStart(7)}  status ${statuses[name]}`,
  )
}
