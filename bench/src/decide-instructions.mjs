// Dev helper: N synchronous decisions of one MemoryStore gcra limiter over 10,000 keys, all
// allowed, through the limiter's internal synchronous decide (no promise, no driving loop), for
// what watching a limiter costs per decision, by instruction counts:
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null node --single-threaded \
//     src/decide-instructions.mjs <N> [--listen=inspector|observer|subscriber] [<repo dir>]
// Run it at N = 20000 and 220000 and divide the difference in "Collected" by 200000. <repo dir>
// (default: this checkout) loads another checkout's built core and inspector.
const listen = process.argv.find((a) => a.startsWith('--listen='))?.slice('--listen='.length)
const [nArg, dirArg] = process.argv.slice(2).filter((a) => !a.startsWith('--'))
const dir = new URL(`${dirArg ?? new URL('../..', import.meta.url).pathname}/`, 'file:///')
const core = await import(new URL('packages/core/dist/index.mjs', dir).href)
const limiter = core.createLimiter({ name: 'decide', algorithm: 'gcra', limit: 1e6, window: '1m' })
if (listen === 'inspector') {
  const { inspector } = await import(new URL('packages/inspector/dist/index.mjs', dir).href)
  inspector({ limiters: [limiter], unsafe: true })
} else if (listen === 'observer') core.observeDecisions(limiter, () => {})
else if (listen === 'subscriber')
  (await import('node:diagnostics_channel')).subscribe('limiter:decision', () => {})
else if (listen !== undefined)
  throw new Error(`--listen: inspector, observer or subscriber, not ${listen}`)
// the limiter's synchronous decide (create-limiter.ts's DECIDE), found by its description
const symbol = Object.getOwnPropertySymbols(limiter).find(
  (s) => s.description === '@limiter/core.decide',
)
const decide = limiter[symbol]
const keys = Array.from({ length: 10_000 }, (_, i) => `user:${i}`)
const n = Number(nArg)
let allowed = 0
for (let i = 0; i < n; i++) if (decide(keys[i % keys.length], 1).allowed) allowed++
console.error(`${n} decisions, ${allowed} allowed`)
process.exit(0)
