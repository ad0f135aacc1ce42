// Section 7 in the report and on the console: what events and the OpenTelemetry bridge cost.
import { ms, num, pct, rate, table } from './format.mjs'

// "+123" / "-4": a difference in ns.
const signedNs = (n) => (Number.isFinite(n) ? `${n >= 0 ? '+' : ''}${n.toFixed(0)}` : '-')

/** Each row with its cost against `none` on the same store: CPU and wall time per decision. */
function withCosts(rows) {
  return rows.map((r) => {
    const none = rows.find((n) => n.store === r.store && n.variant === 'none')
    return {
      ...r,
      ratio: none ? r.perSecond / none.perSecond : Number.NaN,
      // Node CPU per decision, more than with nobody subscribed
      cpuNs: none ? (r.cpuUsPerDecision - none.cpuUsPerDecision) * 1000 : Number.NaN,
      // wall time per decision of the closed loop (1 / rate), more than with nobody subscribed
      wallNs: none ? 1e9 / r.perSecond - 1e9 / none.perSecond : Number.NaN,
    }
  })
}

/** Console lines: each variant against nobody subscribed, per store. */
export function eventsLines(rows) {
  const lines = [`Events, 10k keys all allowed, ${rows[0]?.inFlight} in flight:`]
  for (const r of withCosts(rows)) {
    const against =
      r.variant === 'none'
        ? ''
        : r.variant === 'base'
          ? `  (nobody subscribed is ${pct(1 / r.ratio - 1)} off the base build)`
          : `  ${pct(r.ratio - 1)} dec/s, +${num(r.cpuNs, 0)} ns CPU, +${num(r.wallNs, 0)} ns wall per decision`
    const flag = r.uncounted ? `  ⚠ ${r.uncounted} decisions not counted` : ''
    lines.push(
      `  ${r.store.padEnd(6)} ${r.label.padEnd(34)} ${rate(r.perSecond).padStart(7)}/s  CPU ${num(r.cpuUsPerDecision, 2)} µs${against}${flag}`,
    )
  }
  return lines
}

/** The report's section 7. */
export function eventsSection(rows) {
  if (rows.length === 0) return ''
  const rowsBody = withCosts(rows).map((r) => [
    r.store,
    r.label,
    rate(r.perSecond),
    r.variant === 'none' ? '-' : `${(r.ratio * 100).toFixed(1)}%`,
    num(r.cpuUsPerDecision, 3),
    r.variant === 'none' ? '-' : signedNs(r.cpuNs),
    r.variant === 'none' ? '-' : signedNs(r.wallNs),
    ms(r.p50Ms),
    r.reps.map((n) => rate(n)).join(' / '),
    r.errors > 0 || r.uncounted ? '⚠ see the notes' : '',
  ])
  return `## 7. Events: nobody subscribed, a bare subscriber, the OpenTelemetry bridge

One limiter (the default algorithm), 10,000 keys all allowed, ${rows[0]?.inFlight} in flight, each run in
a child process. "added" is the difference to nobody subscribed on the same store: Node CPU per
decision, and wall time per decision of the closed loop (1 / dec/s).

${table(
  [
    'store',
    'listening on limiter:decision',
    'dec/s',
    'of nobody subscribed',
    'CPU µs/dec',
    'CPU ns/dec added',
    'wall ns/dec added',
    'p50 ms',
    'each run (dec/s)',
    'warning',
  ],
  rowsBody,
)}
`
}
