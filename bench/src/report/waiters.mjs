// Section 9 in the report and on the console: what waiters for a concurrency slot cost the store.

import { WAITERS } from '../waiters.mjs'
import { num, table } from './format.mjs'

const where = (r) =>
  r.processes === 1 ? `${r.store}, 1 process` : `redis, ${r.processes} processes sharing the key`

/** Console lines: store calls per run() and wall time, per case. */
export function waitersLines(rows) {
  const lines = [
    `Waiters: ${WAITERS.calls} run() per process at once, one key, limit ${WAITERS.limit}, ${WAITERS.holdMs} ms held:`,
  ]
  for (const r of rows)
    lines.push(
      `  ${where(r).padEnd(36)} ${num(r.decisionsPerCall, 2)} decisions, ${num(r.evalshaPerCall, 2)} EVALSHA per run(); ${Math.round(r.wallMsMedian)} ms`,
    )
  return lines
}

/** The report's section 9. */
export function waitersSection(rows) {
  if (rows.length === 0) return ''
  const body = rows.map((r) => [
    where(r),
    String(r.calls),
    String(r.decisions),
    num(r.decisionsPerCall, 2),
    r.store === 'memory' ? '-' : num(r.evalshaPerCall, 2),
    String(Math.round(r.wallMsMedian)),
    String(r.maxInFlight),
    String(r.refused),
  ])
  return `
## 9. Waiters for a concurrency slot

${WAITERS.calls} \`run()\` calls per process, all at once, on one key of a \`concurrency\` limiter at
limit ${WAITERS.limit}, each holding its slot ${WAITERS.holdMs} ms (\`maxWait: '2m'\`). "decisions" are the
store decisions the processes made (\`limiter:decision\`, cost > 0); EVALSHA is the
\`INFO commandstats\` delta on Redis (decisions and releases, several per script call when
batched). Median run by wall time (the slowest process's) of ${rows[0]?.runs.length} repetitions.
Waking every waiter on each release made about n²/2 decisions (500,499 for 1,000 in memory).

${table(
  [
    'case',
    'run() calls',
    'decisions',
    'decisions/run',
    'EVALSHA/run',
    'wall ms',
    'most in flight (one process)',
    'refused',
  ],
  body,
)}
`
}
