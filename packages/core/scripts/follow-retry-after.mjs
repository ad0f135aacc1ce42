// `node scripts/follow-retry-after.mjs [window] [limits]`: what a client that follows Retry-After
// gets from each rate algorithm of the built package. For each limit, a client sends; admitted,
// it sends again at once; refused, it waits exactly Retry-After, either as the header says (whole
// seconds, at least 1) or the exact `retryAfterMs`, for 10 windows, from several phases of the
// epoch-aligned windows. Prints the worst admitted share of 10 x limit, and the largest
// Retry-After as a share of the window. The decisions are the algorithms' own (their TypeScript
// twins, which MemoryStore runs and the Lua scripts match) on an injected clock.
import { definePolicy, parseDuration, RATE_ALGORITHMS } from '@limiter/core'
import { retryAfterSeconds } from '@limiter/core/http'
import { TWINS } from '@limiter/core/testing'

const WINDOWS = 10
const window = parseDuration(process.argv[2] ?? '1m')
const limits = (process.argv[3] ?? '1,2,10,100,1000').split(',').flatMap((part) => {
  const [from, to] = part.split('-').map(Number)
  return to === undefined ? [from] : Array.from({ length: to - from + 1 }, (_, i) => from + i)
})
const START = 1_800_000_000_000
const PHASES = [0, 0.001, 0.25, 0.5, 0.75, 0.999].map((p) => Math.floor(p * window))

/** One client from `start` for 10 windows: admissions and the largest Retry-After (ms). */
function follow(algorithm, limit, start, header) {
  const policy = definePolicy(
    algorithm === 'default' ? { limit, window } : { algorithm, limit, window },
  )
  const twin = TWINS[policy.algorithm]
  const end = start + WINDOWS * window
  let state
  let now = start
  let admitted = 0
  let maxRetryMs = 0
  while (now < end) {
    const outcome = twin.check(state, now, policy, 1)
    if (outcome.state !== undefined) state = outcome.state
    if (outcome.allowed) {
      admitted++
      continue
    }
    const waitMs = header ? retryAfterSeconds(outcome) * 1000 : Math.max(1, outcome.retryAfterMs)
    maxRetryMs = Math.max(maxRetryMs, header ? waitMs : outcome.retryAfterMs)
    now += waitMs
  }
  return { admitted, maxRetryMs }
}

/** The worst share over the phases and limits, the largest Retry-After / window. */
function measure(algorithm, limitsOf, header) {
  let worst = Number.POSITIVE_INFINITY
  let worstLimit = 0
  let maxRetry = 0
  for (const limit of limitsOf) {
    for (const phase of PHASES) {
      const { admitted, maxRetryMs } = follow(algorithm, limit, START + phase, header)
      const share = admitted / (WINDOWS * limit)
      if (share < worst) {
        worst = share
        worstLimit = limit
      }
      maxRetry = Math.max(maxRetry, maxRetryMs / window)
    }
  }
  return { worst, worstLimit, maxRetry }
}

const pct = (x) => `${(100 * x).toFixed(1)}%`
const algorithms = ['default', ...RATE_ALGORITHMS]
console.log(`window ${window} ms, ${WINDOWS} windows, phases ${PHASES.join(', ')} ms`)
console.log(
  `| algorithm | limit | admitted (header s) | max Retry-After / window | admitted (exact ms) | max retryAfterMs / window |`,
)
console.log('|---|---|---|---|---|---|')
const groups = process.argv[3] === undefined ? limits.map((l) => [l]) : [limits]
for (const algorithm of algorithms) {
  for (const group of groups) {
    const h = measure(algorithm, group, true)
    const e = measure(algorithm, group, false)
    const label =
      group.length === 1
        ? String(group[0])
        : `${group[0]}-${group.at(-1)} (worst ${h.worstLimit}/${e.worstLimit})`
    const name =
      algorithm === 'default'
        ? `default (${definePolicy({ limit: 1, window }).algorithm})`
        : algorithm
    console.log(
      `| ${name} | ${label} | ${pct(h.worst)} | ${h.maxRetry.toFixed(3)} | ${pct(e.worst)} | ${e.maxRetry.toFixed(3)} |`,
    )
  }
}
