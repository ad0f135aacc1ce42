// Section 7: the same decisions on each client library: ours on ioredis and on node-redis, and
// the peers that take a node-redis client. Decisions/s and Node CPU per decision.
import { CLIENTS_SCENARIO } from './config.mjs'
import { CLIENT_CONTENDERS } from './contenders/clients.mjs'
import { measurePlan, summarize } from './decisions.mjs'
import { median } from './stats.mjs'

/** Runs each contender `profile.reps` times, interleaved. One row per contender. */
export async function runClients(context) {
  const { port } = context
  // measureOnce hands `create` an ioredis `connect`; these contenders make their own clients.
  const contenders = CLIENT_CONTENDERS.map((c) => ({
    ...c,
    create: (options) => c.create({ ...options, port }),
  }))
  const plan = await measurePlan(contenders, CLIENTS_SCENARIO, context)
  return plan.map(({ contender, skip, runs }) => ({
    id: contender.id,
    owner: contender.owner,
    label: contender.label,
    store: contender.store,
    scenario: CLIENTS_SCENARIO.id,
    inFlight: CLIENTS_SCENARIO.inFlight,
    ...(skip ? { skip } : summarize(runs)),
  }))
}

/** Console lines: one per contender, and ours on node-redis against ours on ioredis. */
export function clientsLines(rows) {
  const lines = [
    `Client libraries (${CLIENTS_SCENARIO.title}, ${CLIENTS_SCENARIO.inFlight} in flight):`,
    '',
    '| contender | decisions/s | Node CPU µs/decision | p99 ms | Redis commands/decision |',
    '|---|---|---|---|---|',
  ]
  for (const r of rows) {
    if (r.skip) {
      lines.push(`| ${r.label} | skipped: ${r.skip} | | | |`)
      continue
    }
    lines.push(
      `| ${r.label} | ${Math.round(r.perSecond)} | ${r.cpuUsPerDecision.toFixed(1)} | ${r.p99Ms.toFixed(1)} | ${r.executedPerDecision.toFixed(3)} |`,
    )
  }
  const io = rows.find((r) => r.id === 'ours/ioredis')
  const nr = rows.find((r) => r.id === 'ours/node-redis')
  if (io?.perSecond && nr?.perSecond) {
    // Each rep ran the two one after the other: the ratio within a rep is the steadier figure
    // on a busy machine, where a whole rep can run at a fraction of another's rate.
    const paired = median(io.reps.map((r, i) => (nr.reps[i] ?? 0) / r))
    lines.push(
      '',
      `ours on node-redis: ${((nr.perSecond / io.perSecond) * 100).toFixed(0)}% of the decisions/s on ioredis (median of per-rep ratios: ${(paired * 100).toFixed(0)}%), ${((nr.cpuUsPerDecision / io.cpuUsPerDecision) * 100).toFixed(0)}% of its Node CPU per decision`,
    )
  }
  return lines
}
