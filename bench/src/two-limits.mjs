// Section 5: two limits on one key (per second and per day) on Redis, ours against the peers'
// ways of stacking two limiters: decisions/s and CPU per decision, then the quota that refused
// requests leave counted in the other policy's counters.
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { TWO_LIMITS } from './config.mjs'
import { TWO_LIMIT_CONTENDERS } from './contenders/two-limits.mjs'
import { measurePlan, summarize } from './decisions.mjs'
import { connect } from './redis-client.mjs'

// Past this, a burst and its read may straddle a 1 s window's end, or a GCRA at 3 per second
// (one request back every 333 ms) may give one back before the read: its figures are not exact.
const SLOW_BURST_MS = 250

/**
 * How many of the quota phase's requests a limiter that admits a request only when every policy
 * has room (and then counts it in all) admits. A policy whose window is shorter than the gap
 * between bursts starts each burst afresh; a longer one spans the phase.
 */
export function idealAdmissions({ limits, bursts, burstSize, gapMs }) {
  const left = limits.map((p) => p.limit)
  let admitted = 0
  for (let b = 0; b < bursts; b++) {
    limits.forEach((p, i) => {
      if (p.windowMs < gapMs) left[i] = p.limit
    })
    for (let r = 0; r < burstSize; r++) {
      if (left.some((n) => n <= 0)) continue
      admitted++
      for (let i = 0; i < left.length; i++) left[i]--
    }
  }
  return admitted
}

/**
 * The quota phase for one contender: one key, `bursts` bursts of `burstSize` requests one after
 * another, each in its own per-second window; after each burst, the units each policy's counter
 * holds. Burned, per policy: what its counter holds beyond the requests admitted (summed over the
 * bursts for a per-second policy, at the end for the per-day one).
 */
async function quotaPhase(contender, port) {
  const { limits, bursts, burstSize, gapMs } = TWO_LIMITS.quota
  const instance = await contender.create({ connect: (o) => connect(port, o), limits })
  const key = `quota:${contender.id}`
  const burned = limits.map(() => 0)
  let admitted = 0
  let held = limits.map(() => 0)
  let maxBurstMs = 0
  const admittedPerBurst = []
  try {
    for (let b = 0; b < bursts; b++) {
      const startedAt = performance.now()
      let admittedNow = 0
      for (let r = 0; r < burstSize; r++) if (await instance.decide(key)) admittedNow++
      held = await instance.counters(key)
      maxBurstMs = Math.max(maxBurstMs, performance.now() - startedAt)
      admitted += admittedNow
      admittedPerBurst.push(admittedNow)
      limits.forEach((p, i) => {
        if (p.windowMs < gapMs) burned[i] += held[i] - admittedNow
      })
      if (b < bursts - 1) await sleep(Math.max(0, gapMs - (performance.now() - startedAt)))
    }
    limits.forEach((p, i) => {
      if (p.windowMs >= gapMs) burned[i] = held[i] - admitted
    })
  } finally {
    await instance.close()
  }
  return {
    requests: bursts * burstSize,
    admitted,
    ideal: idealAdmissions(TWO_LIMITS.quota),
    admittedPerBurst,
    burned: Object.fromEntries(limits.map((p, i) => [p.name, burned[i]])),
    burnedTotal: burned.reduce((a, n) => a + n, 0),
    heldAtEnd: Object.fromEntries(limits.map((p, i) => [p.name, held[i]])),
    maxBurstMs,
    slow: maxBurstMs > SLOW_BURST_MS,
  }
}

/**
 * Runs every available contender `profile.reps` times, interleaved, at 256 in flight over 10,000
 * keys (reusing section 1's measurement: Node and Redis CPU, commands), then the quota phase of
 * the two-policy contenders, all at once (each on its own key). Returns one row per contender;
 * an unavailable one's row carries `skip`.
 */
export async function runTwoLimits(context) {
  const { port, admin, log } = context
  const scenario = TWO_LIMITS
  const plan = await measurePlan(TWO_LIMIT_CONTENDERS, scenario, context)
  const ready = plan.filter((entry) => !entry.skip)
  const quotaEntries = ready.filter((entry) => entry.contender.policies > 1)
  await admin.flushdb()
  const quotas = await Promise.all(
    quotaEntries.map((entry) =>
      quotaPhase(entry.contender, port).catch((error) => ({
        error: String(error?.message ?? error),
      })),
    ),
  )
  await admin.flushdb()
  quotaEntries.forEach((entry, i) => {
    entry.quota = quotas[i]
    const q = quotas[i]
    log(
      `  quota    ${entry.contender.id.padEnd(40)} ${q.error ? `error: ${q.error}` : `admitted ${q.admitted}/${q.requests} (${q.ideal} allowed by the limits), burned ${JSON.stringify(q.burned)}`}`,
    )
  })
  return plan.map(({ contender, skip, runs, quota }) => ({
    id: contender.id,
    owner: contender.owner,
    label: contender.label,
    policies: contender.policies,
    store: contender.store,
    scenario: scenario.id,
    inFlight: scenario.inFlight,
    ...(skip ? { skip } : summarize(runs)),
    quota,
  }))
}
