// The headline figures: ours per algorithm against the best peer, from one run's results.
import { PEER_NAMES } from '../contenders/index.mjs'
import { bestPeer } from '../decisions.mjs'
import { median, ratio } from '../stats.mjs'
import { ms, num, rate, table, times } from './format.mjs'

const find = (rows, id, scenario, inFlight) =>
  rows.find((r) => r.id === id && r.scenario === scenario && r.inFlight === inFlight)

function lowestPeer(rows, field) {
  let best
  for (const row of rows) {
    if (!PEER_NAMES.includes(row.owner) || !Number.isFinite(row[field])) continue
    if (best === undefined || row[field] < best[field]) best = row
  }
  return best
}

/** Whether any figure of a headline row failed a sanity check (see checks.mjs). */
export const flagged = (r) => Boolean(r.distinct.warning || r.hot?.warning || r.memory?.warning)

/** Headline data at the highest concurrency measured. */
export function headline(results) {
  const { decisions, memory } = results
  const inFlight = Math.max(...decisions.map((r) => r.inFlight))
  const redisRows = decisions.filter(
    (r) => r.store === 'redis' && r.scenario === 'distinct' && r.inFlight === inFlight,
  )
  const peerDistinct = bestPeer(decisions, 'redis', 'distinct', inFlight)
  const peerHot = bestPeer(decisions, 'redis', 'hot', inFlight)
  const peerCpu = lowestPeer(redisRows, 'cpuUsPerDecision')
  const peerBytes = lowestPeer(memory, 'usedMemoryPerKey')
  const evalsha = find(decisions, 'reference/evalsha/redis', 'distinct', inFlight)
  const rows = redisRows.map((distinct) => {
    const hot = find(decisions, distinct.id, 'hot', inFlight)
    const mem = memory.find((m) => m.id === distinct.id)
    return {
      id: distinct.id,
      owner: distinct.owner,
      label: distinct.label,
      distinct,
      hot,
      memory: mem,
      distinctVsBestPeer: ratio(distinct.perSecond, peerDistinct?.perSecond),
      distinctVsEvalsha: ratio(distinct.perSecond, evalsha?.perSecond),
      hotVsBestPeer: ratio(hot?.perSecond, peerHot?.perSecond),
      cpuVsBestPeer: ratio(distinct.cpuUsPerDecision, peerCpu?.cpuUsPerDecision),
      bytesVsBestPeer: ratio(mem?.usedMemoryPerKey, peerBytes?.usedMemoryPerKey),
    }
  })
  return { inFlight, rows, peerDistinct, peerHot, peerCpu, peerBytes }
}

// The algorithms whose decisions run the gcra script (token-bucket and leaky-bucket make GCRA's).
const GCRA_SCRIPT = ['gcra', 'token-bucket', 'leaky-bucket']

/**
 * One policy on the gcra script against the best peer (10k keys, the headline's concurrency),
 * rep by rep: each run of gcra, token-bucket and leaky-bucket over the peer's run of the same
 * rep. A rep runs every contender in turn, so each ratio holds ours and the peer to the same
 * minutes of a host whose speed drifts; their median is the steadier figure. '' if not measured.
 */
export function gcraRepsText(results) {
  const h = headline(results)
  const peerReps = h.peerDistinct?.reps
  if (peerReps === undefined) return ''
  const ratios = GCRA_SCRIPT.flatMap((algorithm) => {
    const row = h.rows.find((r) => r.id === `ours/${algorithm}/redis`)
    return (row?.distinct.reps ?? []).map((n, i) => ratio(n, peerReps[i]))
  })
  if (ratios.length === 0) return ''
  return `One policy on the gcra script (gcra, token-bucket, leaky-bucket; 10k keys, ${h.inFlight} in flight) against ${h.peerDistinct.label}, rep by rep: ${ratios.map(times).join(' / ')}, median ${times(median(ratios))}.`
}

/** The headline as a markdown table. */
export function headlineTable(results) {
  const h = headline(results)
  const header = [
    'contender (Redis)',
    `10k keys dec/s`,
    'x best peer',
    'x EVALSHA',
    'hot key dec/s',
    'x best peer',
    'CPU µs/dec',
    'Redis CPU µs/dec',
    'cmds sent/dec (10k, hot)',
    'bytes/key',
    'MEMORY USAGE/key',
  ]
  const body = h.rows.map((r) => [
    `${r.owner === 'ours' ? `**${r.label}**` : r.label}${flagged(r) ? ' ⚠' : ''}`,
    rate(r.distinct.perSecond),
    times(r.distinctVsBestPeer),
    times(r.distinctVsEvalsha),
    rate(r.hot?.perSecond),
    times(r.hotVsBestPeer),
    num(r.distinct.cpuUsPerDecision),
    num(r.distinct.redisCpuUsPerDecision),
    `${num(r.distinct.sentPerDecision, 2)}, ${num(r.hot?.sentPerDecision, 2)}`,
    num(r.memory?.usedMemoryPerKey, 0),
    num(r.memory?.memoryUsagePerKey, 0),
  ])
  return { inFlight: h.inFlight, markdown: table(header, body) }
}

function httpRatios(http) {
  const lines = []
  for (const framework of [...new Set(http.map((r) => r.framework))]) {
    const bare = http.find((r) => r.framework === framework && r.variant === 'bare')
    if (!bare || !Number.isFinite(bare.perSecond)) continue
    const parts = http
      .filter((r) => r.framework === framework && r.variant !== 'bare' && r.mode === 'pass')
      .map(
        (r) =>
          `${r.variant} ${r.skip ? 'skipped' : `${times(r.perSecond / bare.perSecond)} (+${num(r.cpuUsPerRequest - bare.cpuUsPerRequest)} µs)`}`,
      )
    lines.push(
      `  HTTP ${framework} (bare ${rate(bare.perSecond)} req/s, ${num(bare.cpuUsPerRequest)} µs server CPU/req; limits passing, x bare (+server CPU µs/req)): ${parts.join(', ')}`,
    )
  }
  return lines
}

/** Short lines of ratios for the console: what `bench:quick` is for. */
export function headlineLines(results) {
  const h = headline(results)
  const lines = [
    `Headline ratios (Redis store, ${h.inFlight} in flight; ratios to the best peer in this run):`,
  ]
  const peer = (row) => (row ? `${row.owner} ${rate(row.perSecond)}` : 'none')
  lines.push(`  best peer, 10k keys: ${peer(h.peerDistinct)}; hot key: ${peer(h.peerHot)}`)
  for (const r of h.rows.filter((row) => row.owner === 'ours')) {
    lines.push(
      `${flagged(r) ? '⚠ ' : '  '}${r.label.padEnd(22)} 10k keys ${rate(r.distinct.perSecond).padStart(6)} ${times(r.distinctVsBestPeer).padStart(6)}` +
        `  hot ${rate(r.hot?.perSecond).padStart(6)} ${times(r.hotVsBestPeer).padStart(6)}` +
        `  CPU ${num(r.distinct.cpuUsPerDecision)} µs ${times(r.cpuVsBestPeer)}` +
        `  ${num(r.memory?.usedMemoryPerKey, 0)} B/key ${times(r.bytesVsBestPeer)}` +
        `  hot cmds/dec ${num(r.hot?.sentPerDecision, 2)}`,
    )
  }
  const mem = results.decisions.filter(
    (r) =>
      r.owner === 'ours' &&
      r.store === 'memory' &&
      r.scenario === 'distinct' &&
      r.inFlight === h.inFlight,
  )
  if (mem.length > 0)
    lines.push(
      `  MemoryStore, 10k keys: ${mem.map((r) => `${r.algorithm} ${rate(r.perSecond)}`).join(', ')}`,
    )
  const gcraReps = gcraRepsText(results)
  if (gcraReps !== '') lines.push(`  ${gcraReps}`)
  lines.push(...httpRatios(results.http))
  const p = h.peerCpu
  if (p)
    lines.push(
      `  lowest peer CPU/decision: ${p.owner} ${num(p.cpuUsPerDecision)} µs; p99 of ${p.owner} ${ms(p.p99Ms)} ms`,
    )
  return lines
}
