// Sections 1 and 4: decisions/s, latency and Node CPU with no HTTP, and Redis commands per decision.

import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { SCENARIOS } from './config.mjs'
import { PEER_NAMES } from './contenders/index.mjs'
import { drive } from './drive.mjs'
import { connect, sent } from './redis-client.mjs'
import { callsDelta, commandCalls, serverCpuUs } from './redis-stats.mjs'
import { median } from './stats.mjs'

const MEMORY_CHILD = fileURLToPath(new URL('./memory-child.mjs', import.meta.url))

// In-memory contenders run in a child process each time: a fresh heap, as in a real server.
function measureInChild(contender, scenario, inFlight, runMs, warmupMs) {
  const config = { id: contender.id, scenario: scenario.id, inFlight, runMs, warmupMs }
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [MEMORY_CHILD, JSON.stringify(config)],
      { timeout: 60_000, maxBuffer: 1 << 20 },
      (error, stdout) => {
        if (error) return reject(error)
        const run = JSON.parse(stdout.trim().split('\n').at(-1))
        resolve({
          ...run,
          sentPerDecision: 0,
          executedPerDecision: 0,
          redisCpuUsPerDecision: Number.NaN,
          commands: {},
        })
      },
    )
  })
}

/**
 * One timed run of `contender` in `scenario` (after a warm-up): drive()'s figures plus, on Redis,
 * commands and Redis CPU per decision. `scenario` holds `limit` and `windowMs`, or `limits`.
 */
export async function measureOnce(contender, scenario, inFlight, { port, admin, runMs, warmupMs }) {
  if (contender.store !== 'redis')
    return measureInChild(contender, scenario, inFlight, runMs, warmupMs)
  const { limit, windowMs, limits, keyAt } = scenario
  const instance = await contender.create({
    connect: (o) => connect(port, o),
    limit,
    windowMs,
    limits,
  })
  const onRedis = contender.store === 'redis'
  try {
    const allowedOf = instance.allowed
    await drive(instance.decide, { keyAt, inFlight, durationMs: warmupMs, allowedOf })
    const callsBefore = onRedis ? await commandCalls(admin) : undefined
    const redisCpuBefore = onRedis ? await serverCpuUs(admin) : 0
    const sentBefore = sent.commands
    const run = await drive(instance.decide, { keyAt, inFlight, durationMs: runMs, allowedOf })
    const sentDuring = sent.commands - sentBefore
    const redisCpuUs = onRedis ? (await serverCpuUs(admin)) - redisCpuBefore : 0
    const commands = onRedis ? callsDelta(callsBefore, await commandCalls(admin)) : {}
    const executed = Object.values(commands).reduce((a, b) => a + b, 0)
    return {
      ...run,
      sentPerDecision: onRedis ? sentDuring / run.decisions : 0,
      // Includes the harness's two INFO calls: negligible next to a run's decisions.
      redisCpuUsPerDecision: onRedis ? redisCpuUs / run.decisions : Number.NaN,
      executedPerDecision: onRedis ? executed / run.decisions : 0,
      commands: Object.fromEntries(
        Object.entries(commands).map(([k, v]) => [k, v / run.decisions]),
      ),
    }
  } finally {
    await instance.close()
    if (onRedis) await admin.flushdb()
  }
}

/** The medians of several runs of one contender, with each run's decisions/s. */
export function summarize(runs) {
  const pick = (field) => median(runs.map((r) => r[field]))
  return {
    perSecond: pick('perSecond'),
    p50Ms: pick('p50Ms'),
    p99Ms: pick('p99Ms'),
    cpuUsPerDecision: pick('cpuUsPerDecision'),
    redisCpuUsPerDecision: pick('redisCpuUsPerDecision'),
    allowedShare: pick('allowedShare'),
    sentPerDecision: pick('sentPerDecision'),
    executedPerDecision: pick('executedPerDecision'),
    commands: runs.at(-1).commands,
    errors: runs.reduce((a, r) => a + r.errors, 0),
    firstError: runs.find((r) => r.firstError)?.firstError,
    reps: runs.map((r) => Math.round(r.perSecond)),
  }
}

/**
 * Runs every contender in every scenario and concurrency, `profile.reps` times, interleaved
 * (rep 1 of everything, then rep 2, ...) so slow phases of a noisy machine spread over all.
 * Returns one row per (contender, scenario, inFlight) with medians.
 */
export async function runDecisions({ profile, port, admin, contenders, log }) {
  const plan = []
  for (const scenario of SCENARIOS) {
    if (!profile.scenarios.includes(scenario.id)) continue
    for (const inFlight of profile.inFlight) {
      for (const contender of contenders) {
        if (contender.store === 'memory' && !profile.memoryStoreScenarios.includes(scenario.id))
          continue
        plan.push({ contender, scenario, inFlight, runs: [] })
      }
    }
  }
  for (let rep = 1; rep <= profile.reps; rep++) {
    for (const entry of plan) {
      const { contender, scenario, inFlight } = entry
      const onRedis = contender.store === 'redis'
      const run = await measureOnce(contender, scenario, inFlight, {
        port,
        admin,
        runMs: onRedis ? profile.redisRunMs : profile.memoryRunMs,
        warmupMs: profile.warmupMs,
      })
      entry.runs.push(run)
      const k = `${Math.round(run.perSecond / 100) / 10}k/s`
      const errors = run.errors > 0 ? `  ${run.errors} errors: ${run.firstError}` : ''
      log(
        `  rep ${rep}/${profile.reps}  ${scenario.id.padEnd(8)} x${String(inFlight).padEnd(4)} ${contender.id.padEnd(40)} ${k}${errors}`,
      )
    }
  }
  return plan.map(({ contender, scenario, inFlight, runs }) => ({
    id: contender.id,
    owner: contender.owner,
    label: contender.label,
    algorithm: contender.algorithm,
    store: contender.store,
    scenario: scenario.id,
    inFlight,
    ...summarize(runs),
  }))
}

/** The best peer row (highest decisions/s) among `rows` for one store, scenario and inFlight. */
export function bestPeer(rows, store, scenario, inFlight) {
  let best
  for (const row of rows) {
    if (!PEER_NAMES.includes(row.owner)) continue
    if (row.store !== store || row.scenario !== scenario || row.inFlight !== inFlight) continue
    if (best === undefined || row.perSecond > best.perSecond) best = row
  }
  return best
}

/**
 * The plan of a Redis section: each contender with why it cannot run (if so), measured
 * `profile.reps` times at `scenario.inFlight`, interleaved across contenders, each run logged.
 * Returns the plan, each entry holding its runs.
 */
export async function measurePlan(contenders, scenario, { profile, port, admin, log }) {
  const plan = contenders.map((contender) => ({
    contender,
    skip: contender.unavailable(),
    runs: [],
  }))
  for (const { contender, skip } of plan) if (skip) log(`  ${contender.id.padEnd(40)} ${skip}`)
  const ready = plan.filter((entry) => !entry.skip)
  for (let rep = 1; rep <= profile.reps; rep++) {
    for (const entry of ready) {
      const run = await measureOnce(entry.contender, scenario, scenario.inFlight, {
        port,
        admin,
        runMs: profile.redisRunMs,
        warmupMs: profile.warmupMs,
      })
      entry.runs.push(run)
      const k = `${Math.round(run.perSecond / 100) / 10}k/s`
      const errors = run.errors > 0 ? `  ${run.errors} errors: ${run.firstError}` : ''
      log(
        `  rep ${rep}/${profile.reps}  x${scenario.inFlight} ${entry.contender.id.padEnd(40)} ${k}${errors}`,
      )
    }
  }
  return plan
}
