// A paired A/B of two core builds on MemoryStore, in one process: this repo's core and another
// build (`node src/ab-core.mjs <other packages/core dir> [rounds] [decisions per run] [--sync]`;
// `--sync`: the adapters' synchronous path instead of `consume`'s promise). Both
// limiters run the same closed loop (10,000 keys, all allowed, 256 in flight) in alternating
// short runs, so a busy machine slows both alike; prints each build's median ns per decision
// and the median of the per-round ratios, with its quartiles. MemoryStore is where a per-decision
// cost weighs most: a Redis decision costs the same plus a round trip. Two module instances of
// one build can settle a few % apart in one process: run it several times, and against a copy
// of this build to see that bias.
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { SCENARIOS } from './config.mjs'
import { drive } from './drive.mjs'
import { median, percentile } from './stats.mjs'

const sync = process.argv.includes('--sync')
const [baseDir, roundsArg = '60', opsArg = '200000'] = process.argv
  .slice(2)
  .filter((a) => a !== '--sync')
if (baseDir === undefined) {
  console.error(
    'usage: node src/ab-core.mjs <other packages/core dir> [rounds] [decisions per run]',
  )
  process.exit(1)
}
const rounds = Number(roundsArg)
const ops = Number(opsArg)
const { limit, windowMs, keyAt } = SCENARIOS.find((s) => s.id === 'distinct')

const builds = {
  this: await import('@limiter/core'),
  base: await import(pathToFileURL(join(baseDir, 'dist', 'index.mjs')).href),
}
const deciders = Object.fromEntries(
  Object.entries(builds).map(([name, core]) => {
    const limiter = core.createLimiter({
      limit,
      window: windowMs,
      store: new core.MemoryStore({ maxKeys: 200_000 }),
    })
    // the adapters' path: a MemoryStore decision without a promise (an internal symbol)
    const decideSymbol = Object.getOwnPropertySymbols(limiter).find(
      (s) => s.description === '@limiter/core.decide',
    )
    const decideNow = limiter[decideSymbol]
    return [
      name,
      sync && decideNow
        ? (key) => decideNow(key, 1).allowed
        : (key) => limiter.consume(key).then((d) => d.allowed),
    ]
  }),
)

// wall and CPU ns per decision of one run
const measure = async (decide) => {
  const run = await drive(decide, { keyAt, inFlight: 256, durationMs: 60_000, maxOps: ops })
  if (run.errors > 0 || run.allowedShare < 1) throw new Error(`bad run: ${JSON.stringify(run)}`)
  return { wall: 1e9 / run.perSecond, cpu: run.cpuUsPerDecision * 1000 }
}

// warm both up
for (let i = 0; i < 3; i++) for (const d of Object.values(deciders)) await measure(d)
const runs = { this: [], base: [] }
for (let round = 0; round < rounds; round++) {
  // alternate which goes first, so neither always runs on a warmer or cooler machine
  const order = round % 2 === 0 ? ['base', 'this'] : ['this', 'base']
  for (const name of order) runs[name].push(await measure(deciders[name]))
}
const fmt = (x) => `${x >= 1 ? '+' : ''}${((x - 1) * 100).toFixed(2)}%`
for (const field of ['wall', 'cpu']) {
  const mine = runs.this.map((r) => r[field])
  const base = runs.base.map((r) => r[field])
  const ratios = Float64Array.from(mine.map((m, i) => m / base[i])).sort()
  console.log(
    `${field.padEnd(4)} ns/decision: this ${median(mine).toFixed(0)}, base ${median(base).toFixed(0)}; ` +
      `this over base, per round: median ${fmt(median([...ratios]))} (quartiles ${fmt(percentile(ratios, 25))} to ${fmt(percentile(ratios, 75))})`,
  )
}
console.log(
  `${rounds} rounds of ${ops} decisions each, MemoryStore, 10k keys, 256 in flight, ${sync ? 'synchronous path' : 'consume'}`,
)
process.exit(0)
