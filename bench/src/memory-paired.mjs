// Section 1's MemoryStore comparison, paired: every in-memory contender runs once per round, in
// a fresh child each time, rounds alternating the order, so a slow phase of a shared machine
// weighs on every contender of a round alike. Each contender's ratio to the best peer is taken
// within each round, and the median and range of those ratios reported: steadier than the ratio
// of two medians taken minutes apart, which swings by 0.6x-1.3x on a noisy host.
import { SCENARIOS } from './config.mjs'
import { PEER_NAMES } from './contenders/index.mjs'
import { measureOnce } from './decisions.mjs'
import { rate, table, times } from './report/format.mjs'
import { median } from './stats.mjs'

const IN_FLIGHT = 256
// the scenarios compared: distinct keys and the refused hot key
const PAIRED_SCENARIOS = SCENARIOS.filter((s) => ['distinct', 'hot'].includes(s.id))

/**
 * Runs the in-memory contenders `profile.paired.rounds` times in each scenario; returns
 * { rounds, runMs, inFlight, rows }, one row per contender and scenario: median decisions/s and
 * the median, lowest and highest of its per-round ratio to the best peer.
 */
export async function runMemoryPaired({ profile, contenders, log }) {
  const { rounds, runMs, warmupMs } = profile.paired
  const memory = contenders.filter((c) => c.store === 'memory')
  const rows = []
  for (const scenario of PAIRED_SCENARIOS) {
    const runs = new Map(memory.map((c) => [c.id, []]))
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? memory : [...memory].reverse()
      for (const contender of order) {
        const run = await measureOnce(contender, scenario, IN_FLIGHT, { runMs, warmupMs })
        runs.get(contender.id).push(run.perSecond)
      }
      log(`  round ${round + 1}/${rounds}  ${scenario.id}`)
    }
    rows.push(...pairedRows(memory, scenario.id, runs))
  }
  return { rounds, runMs, inFlight: IN_FLIGHT, rows }
}

// The rows of one scenario. The best peer is the one closest to each round's fastest peer (the
// median of its share of that rate), not the highest median rate: two peers a few % apart swap
// medians from run to run. Every contender's rate is divided by that peer's in the same round.
function pairedRows(contenders, scenario, runs) {
  const peers = contenders.filter((c) => PEER_NAMES.includes(c.owner))
  const fastest = runs
    .get(peers[0].id)
    .map((_, i) => Math.max(...peers.map((p) => runs.get(p.id)[i])))
  const share = (peer) => median(runs.get(peer.id).map((perSecond, i) => perSecond / fastest[i]))
  const best = peers.reduce((a, b) => (share(b) > share(a) ? b : a))
  const bestRuns = runs.get(best.id)
  return contenders.map((c) => {
    const own = runs.get(c.id)
    const ratios = own.map((perSecond, i) => perSecond / bestRuns[i])
    return {
      id: c.id,
      owner: c.owner,
      label: c.label,
      scenario,
      bestPeer: best.label,
      perSecond: median(own),
      ratio: median(ratios),
      low: Math.min(...ratios),
      high: Math.max(...ratios),
      runs: own,
    }
  })
}

/** The markdown of the paired comparison, one table per scenario. */
export function memoryPairedSection(paired) {
  if (paired === undefined) return '_Not run._'
  return PAIRED_SCENARIOS.map((scenario) => {
    const rows = paired.rows.filter((r) => r.scenario === scenario.id)
    if (rows.length === 0) return ''
    const body = rows.map((r) => [
      r.owner === 'ours' ? `**${r.label}**` : r.label,
      rate(r.perSecond),
      times(r.ratio),
      `${times(r.low)} - ${times(r.high)}`,
    ])
    return (
      `#### ${scenario.title} (best peer: ${rows[0].bestPeer})\n\n` +
      table(
        ['contender', 'dec/s (median)', 'x best peer, same round (median)', 'lowest - highest'],
        body,
      )
    )
  })
    .filter((part) => part !== '')
    .join('\n\n')
}
