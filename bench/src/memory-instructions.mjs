// Dev helper: N decisions of one in-memory contender, 256 in flight, for instruction counts:
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//     node --single-threaded --hash-seed=1 --random-seed=1 src/memory-instructions.mjs <id> <scenario> <N>
// (the fixed seeds keep V8's string hashes, and so Map probing, alike from run to run: without
// them one contender's count varies by ~5%; with them and --clock, by ~1%).
// Run it at two N (20000 and 220000) and divide the difference in "Collected" by 200000: the
// instructions per decision, start-up left out (BENCHMARKS.md). <benchDir> (4th argument) runs
// another checkout's bench and core (e.g. a base worktree's).
// `--listen=subscriber` or `--listen=inspector`: with a bare subscriber on `limiter:decision`, or
// with this checkout's @limiter/inspector attached to the limiter (ours only), for what events cost.
// `--clock=<n>`: Date.now advances 1 ms every n calls, as at a real run's rate (n decisions a
// ms), so the count is not skewed by how slow the run is under valgrind (work done once a ms
// would weigh ~50 times what it weighs at full speed). Date.now then costs a few instructions,
// not ~250: the figures leave the clock out, for every contender alike.
const perMs = Number(process.argv.find((a) => a.startsWith('--clock='))?.slice('--clock='.length))
if (perMs > 0) {
  let calls = 0
  let t = Date.now()
  Date.now = () => (++calls % perMs === 0 ? ++t : t)
}
const listen = process.argv.find((a) => a.startsWith('--listen='))?.slice('--listen='.length)
const [id, scenarioId, nArg, benchDir = '..'] = process.argv
  .slice(2)
  .filter((a) => !a.startsWith('--'))
const { subscribe } = await import('node:diagnostics_channel')
const base = new URL(`${benchDir}/src/`, import.meta.url)
const { CONTENDERS } = await import(new URL('contenders/index.mjs', base).href)
const { SCENARIOS } = await import(new URL('config.mjs', base).href)
const contender = CONTENDERS.find((c) => c.id === id)
const scenario = SCENARIOS.find((s) => s.id === scenarioId)
const instance = await contender.create({
  connect: () => Promise.reject(new Error('in-memory contenders have no Redis')),
  limit: scenario.limit,
  windowMs: scenario.windowMs,
})
if (listen === 'subscriber') subscribe('limiter:decision', () => {})
else if (listen === 'inspector') {
  const { inspector } = await import(new URL('../../packages/inspector/dist/index.mjs', base).href)
  if (instance.limiter === undefined) throw new Error(`${id}: no limiter to attach to`)
  inspector({ limiters: [instance.limiter], unsafe: true })
} else if (listen !== undefined) throw new Error(`--listen: subscriber or inspector, not ${listen}`)
const n = Number(nArg)
let i = 0
let allowed = 0
async function worker() {
  while (i < n) {
    const key = scenario.keyAt(i++)
    const result = await instance.decide(key)
    if (instance.allowed === undefined ? result : instance.allowed(result)) allowed++
  }
}
await Promise.all(Array.from({ length: 256 }, worker))
console.error(`${id} ${scenarioId} ${n} decisions, ${allowed} allowed`)
process.exit(0)
