// Dev helper: N decisions of ours on Redis as section 5 makes them (two limits in one script
// call, or the first of them alone), 256 in flight over section 5's 10,000 keys, for the client
// process's instruction counts:
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null node --single-threaded \
//     src/two-limits-instructions.mjs <two|one> <N> <port> [benchDir]
// Run it at two N (20000 and 220000) against a Redis of your own on <port> (not under valgrind)
// and divide the difference in "Collected" by 200000: the Node side's instructions per decision,
// start-up left out (BENCHMARKS.md). The timeout is a minute: under valgrind the process is slow
// enough for the default one to expire, and a timed-out call costs far more than a decision. It
// prints how many decisions came from elsewhere than the store (they must be 0). <benchDir> runs
// another checkout's core (e.g. a copy of the base commit's).
const [shape, nArg, portArg = '6379', benchDir = '..'] = process.argv.slice(2)
const base = new URL(`${benchDir}/src/`, import.meta.url)
const { TWO_LIMITS } = await import(new URL('config.mjs', base).href)
const { connect } = await import(new URL('redis-client.mjs', base).href)
const { createLimiter, RedisStore } = await import(
  new URL('../node_modules/@limiter/core/dist/index.mjs', base).href
)
const client = await connect(Number(portArg))
const specs = TWO_LIMITS.limits.map(({ name, limit, windowMs, algorithm }) => ({
  name,
  limit,
  window: windowMs,
  algorithm,
}))
const store = new RedisStore({ client })
const limiter =
  shape === 'two'
    ? createLimiter({ limits: specs, store, timeout: 60_000 })
    : createLimiter({ ...specs[0], name: undefined, store, timeout: 60_000 })
const n = Number(nArg)
let i = 0
let allowed = 0
let elsewhere = 0
async function worker() {
  while (i < n) {
    const decision = await limiter.consume(TWO_LIMITS.keyAt(i++))
    if (decision.allowed) allowed++
    if (decision.source !== 'store') elsewhere++
  }
}
await Promise.all(Array.from({ length: TWO_LIMITS.inFlight }, worker))
console.error(`${shape} ${n} decisions, ${allowed} allowed, ${elsewhere} not from the store`)
await client.quit()
process.exit(0)
