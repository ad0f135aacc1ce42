// Section 6 in the report and on the console: a slot per request, and the outbound example.
import { CONCURRENCY } from '../config.mjs'
import { ratio } from '../stats.mjs'
import { ms, num, pct, rate, table, times } from './format.mjs'

const OURS_ID = 'ours/concurrency/redis'
const PEER_IDS = ['incr-decr/redis', 'incr-decr-pipelined/redis']

/** Console lines: each contender, ours against the INCR/DECR pair, and the outbound run. */
export function concurrencyLines(rows, outbound) {
  const lines = [
    `Concurrency limit, a slot taken and given back per request (10k keys, ${CONCURRENCY.inFlight} in flight):`,
  ]
  for (const r of rows) {
    if (r.skip) {
      lines.push(`  ${r.label.padEnd(44)} ${r.skip}`)
      continue
    }
    lines.push(
      `  ${r.label.padEnd(44)} ${rate(r.perSecond).padStart(7)}/s  CPU ${num(r.cpuUsPerDecision, 1)} µs  Redis CPU ${num(r.redisCpuUsPerDecision, 1)} µs  Redis commands ${num(r.executedPerDecision, 2)} run, ${num(r.sentPerDecision, 2)} sent per request`,
    )
  }
  const ours = rows.find((r) => r.id === OURS_ID && !r.skip)
  for (const peer of rows.filter((r) => PEER_IDS.includes(r.id) && !r.skip))
    if (ours)
      lines.push(
        `  ours against the ${peer.label}: ${times(ratio(ours.perSecond, peer.perSecond))} decisions/s, Node CPU ${times(ratio(ours.cpuUsPerDecision, peer.cpuUsPerDecision))}, Redis CPU ${times(ratio(ours.redisCpuUsPerDecision, peer.redisCpuUsPerDecision))}`,
      )
  if (outbound)
    lines.push(
      outbound.error
        ? `  outbound example: failed (${outbound.error})`
        : `  outbound example (4 workers, a ${outbound.quota}/s API, ${outbound.seconds} s): ${pct(outbound.used)} of the quota used, ${outbound.refused} upstream 429s`,
    )
  return lines
}

/** The report's section 6. */
export function concurrencySection(rows, outbound) {
  if (rows.length === 0 && !outbound) return ''
  const body = rows.map((r) =>
    r.skip
      ? [r.owner === 'ours' ? `**${r.label}**` : r.label, r.skip, '-', '-', '-', '-', '-', '-', '-']
      : [
          r.owner === 'ours' ? `**${r.label}**` : r.label,
          rate(r.perSecond),
          ms(r.p50Ms),
          ms(r.p99Ms),
          num(r.cpuUsPerDecision, 2),
          num(r.redisCpuUsPerDecision, 2),
          num(r.executedPerDecision, 2),
          num(r.sentPerDecision, 2),
          r.reps.map((n) => rate(n)).join(' / '),
        ],
  )
  const runs = table(
    [
      'contender',
      'requests/s',
      'p50',
      'p99',
      'CPU µs/req',
      'Redis CPU µs/req',
      'Redis commands run/req',
      'commands sent/req',
      'runs',
    ],
    body,
  )
  const out = outbound
    ? outbound.error
      ? `The outbound example failed: ${outbound.error}`
      : `The outbound example (\`examples/outbound\`: 4 worker processes x 8 callers, one shared limiter at 95% of a mock API's ${outbound.quota} calls per second, ${outbound.seconds} s): the API served ${outbound.served} calls and answered ${outbound.refused} with 429; the quota was used at ${(outbound.rate ?? 0).toFixed(1)} calls/s, ${pct(outbound.used)}.`
    : ''
  return `## 6. Concurrency limits and outbound calls

Each request takes a slot on its key (10,000 keys, ${CONCURRENCY.inFlight} in flight, a limit of ${CONCURRENCY.limit} in flight per key, never reached) and gives it back at once: the limiter's own cost per request. Commands run are what Redis executes (inside scripts too); commands sent are what the client writes (a script call counts one, however many decisions it carries). The INCR/DECR pair is what users of the peers write by hand (none of them limits concurrency), once as \`MULTI INCR EXPIRE EXEC\` then \`DECR\`, once at its leanest (\`INCR\` and \`PEXPIRE\` auto-pipelined, then \`DECR\`): it leaks a slot whenever a process dies between its INCR and its DECR, and the expiry every request refreshes keeps a busy key's leak until traffic stops. Ours holds a lease per request that expires on its own.

${runs}

${out}
`
}
