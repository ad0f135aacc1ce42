// A hand-written SVG bar chart of the headline: no chart library, just rects and text.

import { num, rate, times } from './format.mjs'
import { headline } from './headline.mjs'

const WIDTH = 960
const LABEL_W = 250
const VALUE_W = 90
const BAR_H = 16
const GAP = 5
const COLORS = { ours: '#2b6cb0', peer: '#dd8452', reference: '#9a9a9a' }

const xml = (s) =>
  String(s).replace(
    /[&<>"]/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c],
  )

function panel(title, items, top) {
  const max = Math.max(...items.map((i) => i.value).filter(Number.isFinite), 0)
  const barMax = WIDTH - LABEL_W - VALUE_W - 20
  const out = [`<text x="10" y="${top + 16}" class="title">${xml(title)}</text>`]
  let y = top + 28
  for (const item of items) {
    const w = max > 0 && Number.isFinite(item.value) ? Math.max(1, (item.value / max) * barMax) : 0
    out.push(
      `<text x="${LABEL_W - 6}" y="${y + BAR_H - 4}" text-anchor="end">${xml(item.label)}</text>`,
      `<rect x="${LABEL_W}" y="${y}" width="${w.toFixed(1)}" height="${BAR_H}" fill="${COLORS[item.kind]}"/>`,
      `<text x="${LABEL_W + w + 6}" y="${y + BAR_H - 4}">${xml(item.text)}</text>`,
    )
    y += BAR_H + GAP
  }
  return { svg: out.join('\n'), bottom: y + 14 }
}

const kindOf = (owner) => (owner === 'ours' ? 'ours' : owner === 'reference' ? 'reference' : 'peer')

/** The chart: decisions/s (10k keys, hot key), bytes per key and HTTP x bare. */
export function svg(results) {
  const h = results.decisions.length > 0 ? headline(results) : { inFlight: '-', rows: [] }
  const panels = [
    [
      `Redis decisions/s, 10k keys, ${h.inFlight} in flight (higher is better)`,
      h.rows.map((r) => ({
        label: r.label,
        value: r.distinct.perSecond,
        text: rate(r.distinct.perSecond),
        kind: kindOf(r.owner),
      })),
    ],
    [
      `Redis decisions/s, one hot key over its limit, ${h.inFlight} in flight (higher is better)`,
      h.rows.map((r) => ({
        label: r.label,
        value: r.hot?.perSecond,
        text: rate(r.hot?.perSecond),
        kind: kindOf(r.owner),
      })),
    ],
    [
      'Redis bytes per key, used_memory delta (lower is better)',
      h.rows
        .filter((r) => r.memory)
        .map((r) => ({
          label: r.label,
          value: r.memory.usedMemoryPerKey,
          text: num(r.memory.usedMemoryPerKey, 0),
          kind: kindOf(r.owner),
        })),
    ],
  ]
  const http = results.http.filter((r) => r.mode === 'pass' && r.variant !== 'bare' && !r.skip)
  if (http.length > 0) {
    const bare = (f) =>
      results.http.find((r) => r.framework === f && r.variant === 'bare')?.perSecond
    panels.push([
      'HTTP req/s with limits passing, x bare framework (higher is better)',
      http.map((r) => ({
        label: `${r.framework} ${r.variant}`,
        value: r.perSecond / bare(r.framework),
        text: times(r.perSecond / bare(r.framework)),
        kind: r.variant.startsWith('ours/') ? 'ours' : 'peer',
      })),
    ])
  }
  let top = 10
  const bodies = []
  for (const [title, items] of panels) {
    if (items.length === 0) continue
    const p = panel(title, items, top)
    bodies.push(p.svg)
    top = p.bottom
  }
  const legend = Object.entries(COLORS)
    .map(
      ([name, color], i) =>
        `<rect x="${LABEL_W + i * 110}" y="${top}" width="12" height="12" fill="${color}"/><text x="${LABEL_W + i * 110 + 16}" y="${top + 11}">${name}</text>`,
    )
    .join('\n')
  const height = top + 40
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12">
<style>.title { font-weight: bold; font-size: 13px; }</style>
<rect width="100%" height="100%" fill="white"/>
${bodies.join('\n')}
${legend}
<text x="10" y="${height - 8}" fill="#666">${xml(`limiter bench, ${results.meta.date}, profile ${results.meta.profile}; medians of ${results.meta.reps} runs`)}</text>
</svg>
`
}
