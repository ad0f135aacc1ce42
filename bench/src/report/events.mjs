// Section 7 in the report and on the console: what events and the OpenTelemetry bridge cost.
import { num, rate, table } from './format.mjs'

// "+123" / "-4": ns, signed.
const signed = (n) => (Number.isFinite(n) ? `${n >= 0 ? '+' : ''}${n.toFixed(0)}` : '-')
// "+123 (+80 to +150)": a paired difference's median and quartiles, in ns.
const spreadNs = (s) => `${signed(s.median)} (${signed(s.q1)} to ${signed(s.q3)})`
// "-1.2% (-3.0% to +0.8%)": a paired ratio's median and quartiles, as a change.
const pctOf = (x) => `${x >= 1 ? '+' : ''}${((x - 1) * 100).toFixed(1)}%`
const spreadPct = (s) => `${pctOf(s.median)} (${pctOf(s.q1)} to ${pctOf(s.q3)})`

/** Console lines: each variant against nobody subscribed in the same rounds, per store. */
export function eventsLines(rows) {
  const first = rows[0]
  const lines = [
    `Events, 10k keys all allowed, ${first?.inFlight} in flight, ${first?.rounds} paired rounds (median, quartiles):`,
  ]
  for (const r of rows) {
    const against =
      r.variant === 'none'
        ? ''
        : `  dec/s ${spreadPct(r.ratio)}, CPU ${spreadNs(r.cpuNs)} ns, wall ${spreadNs(r.wallNs)} ns per decision`
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
  const body = rows.map((r) => [
    r.store,
    r.label,
    rate(r.perSecond),
    num(r.cpuUsPerDecision, 3),
    r.variant === 'none' ? '-' : spreadPct(r.ratio),
    r.variant === 'none' ? '-' : spreadNs(r.cpuNs),
    r.variant === 'none' ? '-' : spreadNs(r.wallNs),
    r.uncounted ? '⚠ see the notes' : '',
  ])
  return `## 7. Events: nobody subscribed, a bare subscriber, the OpenTelemetry bridge, the inspector

One limiter (the default algorithm), 10,000 keys all allowed, ${rows[0]?.inFlight} in flight; "the
inspector attached": \`inspector({ limiters: [limiter], unsafe: true })\` from
\`@limiter/inspector\` (on Redis with \`store\`, so it also writes its summaries there). One
process per store alternates the variants in short runs, ${rows[0]?.rounds} rounds; each run is
compared with nobody subscribed in the same round (median, and quartiles in parentheses): the
change in decisions/s, and what a decision costs more in Node CPU and in wall time (1 / dec/s
of the closed loop). Medians of dec/s and CPU per decision over all rounds.

${table(
  [
    'store',
    'listening on limiter:decision',
    'dec/s',
    'CPU µs/dec',
    'dec/s vs nobody',
    'CPU ns/dec added',
    'wall ns/dec added',
    'warning',
  ],
  body,
)}
`
}
