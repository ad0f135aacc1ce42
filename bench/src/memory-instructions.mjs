// Dev helper: N decisions of one in-memory contender, 256 in flight, for instruction counts:
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null node src/memory-instructions.mjs <id> <scenario> <N>
// Run it at two N (20000 and 220000) and divide the difference in "Collected" by 200000: the
// instructions per decision, start-up left out (BENCHMARKS.md). <benchDir> (4th argument) runs
// another checkout's bench and core (e.g. a base worktree's).
const [id, scenarioId, nArg, benchDir = '..'] = process.argv.slice(2)
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
const n = Number(nArg)
let i = 0
let allowed = 0
async function worker() {
  while (i < n) {
    const key = scenario.keyAt(i++)
    if (await instance.decide(key)) allowed++
  }
}
await Promise.all(Array.from({ length: 256 }, worker))
console.error(`${id} ${scenarioId} ${n} decisions, ${allowed} allowed`)
process.exit(0)
