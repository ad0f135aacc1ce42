// Dev helper: Hono middleware cost per request, in one process, without the network. Each request
// goes through @hono/node-server's own request listener (its lightweight Request and Response,
// as on a real server) with an in-memory socket, so what is timed is the server's work for one
// request: bare Hono, the floor (IP + two header fields), ours and hono-rate-limiter on their
// memory stores. Variants run interleaved, medians of `reps`; compare two builds side by side
// with `--base=<worktree>` (its packages/hono and packages/core built).
//   node src/hono-micro.mjs [--n=20000] [--reps=7] [--base=/tmp/hono-base] [--only=a,b]
//   [--headers=draft-6] [--algorithm=fixed-window] [--redis-port=6390] [--inflight=1] [--json]
// `--redis-port`: both limiters on Redis at that port (ours `redis`, theirs its `RedisStore` through
// ioredis), each variant on keys of its own; the port must be a private redis-server (keys are
// written, never flushed). `--json`: one JSON line with every round's time, for bench/src/http.
// Reported per variant: the median of its rounds, and over the floor the median and quartiles of
// the paired differences (round r's time minus the floor's in the same round r).
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
// requests in flight at once (a server under load; on Redis, what lets ours batch its calls)
const INFLIGHT = Number(args.inflight ?? 1)
// process CPU time by default (steadier than wall time on a shared machine); `--wall` for wall
const metric = args.wall ? 'wallUs' : 'cpuUs'
const here = new URL('../../', import.meta.url).pathname

const { Hono } = await import('hono')
const { getRequestListener } = await import('@hono/node-server')
const { getConnInfo } = await import('@hono/node-server/conninfo')
const { rateLimiter, RedisStore } = await import('hono-rate-limiter')
const redisPort = args['redis-port'] ? Number(args['redis-port']) : undefined
const redis = redisPort
  ? new (await import('ioredis')).Redis({ port: redisPort, host: '127.0.0.1', lazyConnect: false })
  : undefined

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

function nullSocket() {
  const socket = new NullSocket()
  socket.setMaxListeners(0)
  return socket
}

// One request through `listener` on `socket`, resolved when its response has ended.
function one(listener, socket) {
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
const ourOptions = (mode, who) => {
  const o = { limit: limit(mode), window: 60_000 }
  if (redis) Object.assign(o, { redis, name: `micro-${who}-${mode}-${process.pid}` })
  if (args.headers) o.headers = args.headers
  if (args.algorithm) o.algorithm = args.algorithm
  return o
}
// hono-rate-limiter's RedisStore takes an Upstash-style client: ioredis behind four methods
const hrlStore = (mode) =>
  new RedisStore({
    prefix: `micro-hrl-${mode}-${process.pid}:`,
    client: {
      scriptLoad: (script) => redis.script('LOAD', script),
      evalsha: (sha, keys, args) => redis.evalsha(sha, keys.length, ...keys, ...args),
      decr: (key) => redis.decr(key),
      del: (key) => redis.del(key),
    },
  })
const hrl = (mode) =>
  rateLimiter({
    windowMs: 60_000,
    limit: limit(mode),
    standardHeaders: args['hrl-headers'] ?? 'draft-6',
    keyGenerator: (c) => getConnInfo(c).remote.address ?? '',
    ...(redis ? { store: hrlStore(mode) } : {}),
  })

const ours = await ourModule(here)
const base = args.base ? await ourModule(args.base) : undefined
const variants = {
  bare: () => app(),
  floor: () => app(floor),
}
for (const mode of ['pass', 'limited']) {
  variants[`ours/${mode}`] = () => app(ours.rateLimit(ourOptions(mode, 'ours')))
  if (base) variants[`base/${mode}`] = () => app(base.rateLimit(ourOptions(mode, 'base')))
  variants[`hrl/${mode}`] = () => app(hrl(mode))
}
let names = Object.keys(variants)
if (args.only) names = names.filter((n) => args.only.split(',').includes(n))
if (args.profile) names = [args.profile]

const sockets = Array.from({ length: INFLIGHT }, nullSocket)
const listeners = Object.fromEntries(names.map((n) => [n, variants[n]()]))
const times = Object.fromEntries(names.map((n) => [n, []]))
// on Redis: Redis's own CPU time per request, each round
const redisTimes = Object.fromEntries(names.map((n) => [n, []]))
const { serverCpuUs } = await import('./redis-stats.mjs')
const statuses = {}

async function run(name, n) {
  const listener = listeners[name]
  const t0 = process.cpuUsage()
  const w0 = performance.now()
  // INFLIGHT workers, each with a socket of its own, n requests in all
  const worker = async (socket, count) => {
    for (let i = 0; i < count; i++) statuses[name] = await one(listener, socket)
  }
  await Promise.all(sockets.map((socket, w) => worker(socket, Math.floor((n + w) / INFLIGHT))))
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
// each round starts at the next variant: none always runs first (after the last one's garbage)
for (let r = 0; r < REPS; r++)
  for (const name of names.map((_, i) => names[(i + r) % names.length])) {
    const before = redis ? await serverCpuUs(redis) : 0
    times[name].push((await run(name, N))[metric])
    if (redis) redisTimes[name].push(((await serverCpuUs(redis)) - before) / N)
  }

const sorted = (xs) => [...xs].sort((a, b) => a - b)
const at = (xs, q) => sorted(xs)[Math.min(xs.length - 1, Math.floor(q * xs.length))]
const median = (xs) => at(xs, 0.5)
// round r's time minus the reference's in the same round: the paired differences
const paired = (name, ref) => times[name].map((t, r) => t - times[ref][r])
if (args.json) {
  console.log(
    JSON.stringify({ n: N, reps: REPS, inflight: INFLIGHT, metric, times, redisTimes, statuses }),
  )
  await redis?.quit()
  process.exit(0)
}
const bare = times.bare ? median(times.bare) : undefined
const fmt = (x) => `${x >= 0 ? '+' : ''}${x.toFixed(2)}`
console.log(
  `n=${N} reps=${REPS} inflight=${INFLIGHT} headers=${args.headers ?? 'default'} store=${redis ? 'redis' : 'memory'} (µs per request, ${metric === 'cpuUs' ? 'process CPU' : 'wall'})`,
)
for (const name of names) {
  const m = median(times[name])
  const overBare = bare === undefined ? '' : fmt(m - bare)
  let overFloor = ''
  if (times.floor) {
    const d = paired(name, 'floor')
    overFloor = `${fmt(median(d))} [${fmt(at(d, 0.25))}, ${fmt(at(d, 0.75))}]`
  }
  console.log(
    `${name.padEnd(14)} ${m.toFixed(2).padStart(7)}  over bare ${overBare.padStart(7)}  over floor (paired, median [q1, q3]) ${overFloor.padStart(24)}  status ${statuses[name]}`,
  )
}
await redis?.quit()
