// Dev helper: drives one decision script on a Redis (a redis-server run under
//   valgrind --tool=callgrind --toggle-collect=evalShaCommand redis-server --port <port> --save ''
// counts only the instructions inside EVALSHA): 350 + `calls` EVALSHA of `batch` requests each
// over 10,000 user keys, as RedisStore sends them (KEYS and the block marker, '' for Redis TIME,
// offset 0, then the script's ARGV). Divide the callgrind total by (350 + calls) x batch: instructions per decision.
//   node src/script-instructions.mjs <script.lua> <policies> [calls] [batch] [port] [u][@<rate>]
// A last argument `u` marks every batch as distinct keys (they are), as RedisStore does for a
// plain batch, so a plain path reads them with one MGET (lua/lib/time.lua). `u@<rate>` (or
// `@<rate>`) also sends the time: a clock that starts at the real time and moves <rate>
// decisions/s, as a benchmark run at that rate sees it, and an offset of a day (ARGV[2]), so
// that Redis, whose real time runs ahead of that clock, keeps the keys alive (the scripts take
// the offset back off every expiry they read). Without it the scripts read Redis TIME, and
// under callgrind Redis runs ~50x slower: a state that lasts less than the gap between two
// visits of its key (gcra at 100,000 a day: 864 ms) has expired each time, so the count is the
// path of a new key (GET miss, SET), not the steady one (PEXPIRETIME, PEXPIREAT).
// <policies>: `one:<limit>:<window_ms>:<capacity>` for a one-policy script, or the limits
// script's policies, e.g. `gc:100:1000:100,fw:10000:86400000:10000`. The scripts are in
// lua/build/ after `pnpm --filter @limiter/core generate`. With packed-limits.lua (a set whose
// states share one key), each request sends that one key.
import { readFileSync } from 'node:fs'
import Redis from 'ioredis'

const [file, policyArg, callsArg = '300', batchArg = '32', portArg = '6379', flags = ''] =
  process.argv.slice(2)
const [mark, rateArg] = flags.split('@')
const startMs = Date.now()
let decided = 0
// ARGV[1]: `u` for distinct keys, then '' (Redis TIME) or the virtual clock's ms
function clockArg(batch) {
  if (rateArg === undefined) return mark
  const nowMs = startMs + Math.floor((decided * 1000) / Number(rateArg))
  decided += batch
  return `${mark}${nowMs}`
}
const client = new Redis({ port: Number(portArg) })
const sha = await client.script('LOAD', readFileSync(file, 'utf8'))
const policies = policyArg.split(',').map((p) => p.split(':'))
const one = policies[0][0] === 'one'
const packed = file.endsWith('packed-limits.lua')
const batch = Number(batchArg)
let user = 0

function call() {
  const keys = []
  for (let i = 0; i < batch; i++) {
    const u = user++ % 10_000
    const tag = `{10.0.${u >> 8}.${u & 255}}`
    if (one) keys.push(`rl:a:${tag}`)
    else if (packed) keys.push(`rl:p0:+p1:${tag}`)
    else for (let j = 0; j < policies.length; j++) keys.push(`rl:p${j}:${tag}`)
  }
  const args = one ? policies[0].slice(1) : [policies.length, ...policies.flat()]
  const offsetMs = rateArg === undefined ? 0 : 86_400_000
  // KEYS: the requests', then the block marker (lua/lib/block.lua), as RedisStore sends them
  return client.evalsha(
    sha,
    keys.length + 1,
    ...keys,
    'limiter:blocked',
    clockArg(batch),
    offsetMs,
    ...args,
  )
}

async function run(n) {
  const inFlight = []
  for (let i = 0; i < n; i++) {
    inFlight.push(call())
    if (inFlight.length >= 8) await inFlight.shift()
  }
  await Promise.all(inFlight)
}

await run(350)
await run(Number(callsArg))
client.disconnect()
