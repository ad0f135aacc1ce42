// Section 10 in the results: the overload table, the targets, and an SVG chart (goodput and
// critical success against the offered load, per workload and contender).
import { OURS_CPU, OURS_IO, OVERLOAD, UNDER_PRESSURE, WORKLOADS } from './overload-settings.mjs'
import { ms, num, pct, table } from './report/format.mjs'

const LABELS = {
  none: 'no protection (Express)',
  'under-pressure': '@fastify/under-pressure (Fastify)',
  ours: 'ours: createShedder + shedFirst (Express)',
}
const COLORS = { none: '#9a9a9a', 'under-pressure': '#dd8452', ours: '#2b6cb0' }
const TITLES = {
  cpu: (w) => `CPU-bound (${w.cpuMs} ms busy loop)`,
  io: (w) => `I/O-bound (downstream: ${w.ioSlots} slots x ${w.ioMs} ms)`,
}

/** What the issue asks of ours at 2x and 4x, checked against this run. */
export function overloadTargets(rows) {
  const notes = []
  for (const workload of Object.keys(TITLES)) {
    const ours = rows.filter((r) => r.workload === workload && r.contender === 'ours')
    const base = ours.find((r) => r.multiplier === 0.5)?.critical.p99Ms
    for (const r of ours.filter((x) => x.multiplier >= 2)) {
      const missed = []
      if (!(r.criticalSuccess >= 0.95))
        missed.push(`critical succeeded ${pct(r.criticalSuccess)} (< 95%)`)
      if (!(r.critical.p99Ms <= 2 * base))
        missed.push(`critical p99 ${ms(r.critical.p99Ms)} ms (> 2 x ${ms(base)} ms at 0.5x)`)
      if (!(r.goodputShare >= 0.9))
        missed.push(`goodput ${pct(r.goodputShare)} of capacity (< 90%)`)
      if (r.timeouts > 0) missed.push(`${r.timeouts} timeouts`)
      notes.push(
        `${workload} ${r.multiplier}x, ours: ${missed.length === 0 ? 'every target met' : `missed: ${missed.join('; ')}`}`,
      )
    }
  }
  return notes
}

function rowsOf(rows) {
  return rows.map((r) => [
    r.workload,
    `${r.multiplier}x (${r.rate}/s)`,
    r.contender === 'ours' ? `**${LABELS[r.contender]}**` : LABELS[r.contender],
    `${num(r.goodput, 0)} (${pct(r.goodputShare)})`,
    pct(r.criticalSuccess),
    `${ms(r.critical.p50Ms)} / ${ms(r.critical.p99Ms)}`,
    `${ms(r.low.p50Ms)} / ${ms(r.low.p99Ms)}`,
    String(r.shed),
    String(r.timeouts),
    String(r.errors),
    `${ms(r.lagP99Ms)} / ${ms(r.lagMaxMs)}`,
  ])
}

/** The section as markdown. */
export function overloadSection(overload) {
  if (!overload || overload.rows.length === 0) return '\n## 10. Overload\n\n_Not run._\n'
  const caps = Object.entries(overload.capacity)
    .map(([w, c]) => `${w} ${num(c.perSecond, 0)} 2xx/s`)
    .join(', ')
  const header = [
    'handler',
    'offered load',
    'server',
    'goodput 2xx/s (of capacity)',
    'critical ok',
    'critical p50 / p99 ms',
    'low p50 / p99 ms',
    '503',
    'timeouts',
    'errors',
    'generator lag p99 / max ms',
  ]
  return `
## 10. Overload: goodput and critical traffic at 0.5x to 4x capacity

Capacity (closed loop, ${OVERLOAD.capacityConnections.cpu} / ${OVERLOAD.capacityConnections.io} connections, no protection): ${caps}.
Open loop at each multiple of it, ${pct(OVERLOAD.criticalShare)} critical (\`x-priority: critical\`) and the rest low, evenly
spaced, ${OVERLOAD.warmupMs / 1000} s warm-up then ${OVERLOAD.measureMs / 1000} s measured; a request unanswered after ${OVERLOAD.timeoutMs / 1000} s is a timeout.
Latency is from the request's scheduled send time, of 2xx answers only. Ours: \`${JSON.stringify(OURS_CPU)}\`
on the CPU-bound server, \`${JSON.stringify(OURS_IO)}\` on the I/O-bound one;
@fastify/under-pressure: \`${JSON.stringify(UNDER_PRESSURE)}\`.

${table(header, rowsOf(overload.rows))}

Targets for ours at 2x and 4x (>= 95% of critical succeed, critical p99 within 2x of its 0.5x
value, goodput >= 90% of capacity, no timeouts):

${overloadTargets(overload.rows)
  .map((n) => `- ${n}`)
  .join('\n')}

The chart (\`<this file's name>-overload.svg\` beside it): goodput as a share of capacity and the share of
critical requests that succeeded, against the offered load.
`
}

const xml = (s) =>
  String(s).replace(
    /[&<>"]/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c],
  )

// One panel: x = the offered load (log2 of the multiple), y = 0..maxY of `value(row)`.
function panel(rows, title, value, x0, y0, maxY) {
  const W = 420
  const H = 200
  const xs = OVERLOAD.multipliers
  const px = (m) => x0 + 40 + (Math.log2(m / xs[0]) / Math.log2(xs.at(-1) / xs[0])) * (W - 60)
  const py = (v) => y0 + 30 + (1 - Math.min(v, maxY) / maxY) * (H - 60)
  const out = [`<text x="${x0 + 40}" y="${y0 + 16}" class="title">${xml(title)}</text>`]
  for (let v = 0; v <= maxY + 1e-9; v += 0.25) {
    out.push(
      `<line x1="${x0 + 40}" x2="${x0 + W - 20}" y1="${py(v)}" y2="${py(v)}" class="grid"/>`,
      `<text x="${x0 + 34}" y="${py(v) + 4}" text-anchor="end">${Math.round(v * 100)}%</text>`,
    )
  }
  for (const m of xs)
    out.push(`<text x="${px(m)}" y="${y0 + H - 14}" text-anchor="middle">${m}x</text>`)
  for (const contender of OVERLOAD.contenders) {
    const pts = rows
      .filter((r) => r.contender === contender && Number.isFinite(value(r)))
      .map((r) => `${px(r.multiplier).toFixed(1)},${py(value(r)).toFixed(1)}`)
    if (pts.length === 0) continue
    out.push(
      `<polyline points="${pts.join(' ')}" fill="none" stroke="${COLORS[contender]}" stroke-width="2.5"/>`,
      ...pts.map((p) => {
        const [cx, cy] = p.split(',')
        return `<circle cx="${cx}" cy="${cy}" r="3.5" fill="${COLORS[contender]}"/>`
      }),
    )
  }
  return out.join('\n')
}

/** The chart: per workload, goodput / capacity and critical success against offered load. */
export function overloadSvg(overload) {
  const workloads = Object.keys(TITLES).filter((w) => overload.rows.some((r) => r.workload === w))
  const height = workloads.length * 220 + 60
  const parts = []
  workloads.forEach((w, i) => {
    const rows = overload.rows.filter((r) => r.workload === w)
    const y = i * 220
    parts.push(
      panel(
        rows,
        `${TITLES[w](WORKLOADS[w])}: goodput / capacity`,
        (r) => r.goodputShare,
        0,
        y,
        1.25,
      ),
      panel(rows, 'critical requests answered 2xx', (r) => r.criticalSuccess, 440, y, 1),
    )
  })
  const legend = OVERLOAD.contenders.map(
    (c, i) =>
      `<rect x="${40 + i * 290}" y="${height - 34}" width="14" height="14" fill="${COLORS[c]}"/>` +
      `<text x="${60 + i * 290}" y="${height - 22}">${xml(LABELS[c])}</text>`,
  )
  return `<svg xmlns="http://www.w3.org/2000/svg" width="880" height="${height}" viewBox="0 0 880 ${height}" font-family="sans-serif" font-size="12">
<style>.title{font-weight:bold;font-size:13px}.grid{stroke:#ddd;stroke-width:1}</style>
<rect width="100%" height="100%" fill="white"/>
${parts.join('\n')}
${legend.join('\n')}
<text x="40" y="${height - 4}" fill="#666">x: offered load as a multiple of the capacity measured closed-loop; open loop, 20% critical, 80% low</text>
</svg>
`
}
