// One hand-written SVG chart: sent and admitted per bin, admitted in the last window, the limit.

const W = 760
const H = 370
const PLOT = { left: 56, right: 736, top: 124, bottom: 318 }
const FONT = 'font-family="-apple-system, \'Segoe UI\', Helvetica, Arial, sans-serif"'
export const COLORS = {
  text: '#1f2328',
  muted: '#59636e',
  grid: '#e6eaef',
  axis: '#8c959f',
  sent: '#d1d9e0',
  admitted: '#0969da',
  window: '#bc4c00',
  limit: '#cf222e',
}

/** A coordinate with at most one decimal, the same text on every machine. */
function n(value) {
  return String(Math.round(value * 10) / 10)
}

function esc(text) {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

function text(x, y, body, attrs = '') {
  return `<text x="${n(x)}" y="${n(y)}"${attrs ? ` ${attrs}` : ''}>${esc(body)}</text>`
}

/** Seconds as the axis writes them: 0, 0.5, 1, ... */
function seconds(ms) {
  return `${String(ms / 1000)} s`
}

/**
 * The chart as SVG text. `data`: { title, lines (text under the title), lengthMs, binMs,
 * windowMs, limit, sent, admitted (per bin), steps ([ms, count] of admitted in the last window) }.
 */
export function chart(data) {
  const { lengthMs, binMs, limit } = data
  const top = Math.max(2 * limit, ...data.sent, ...data.steps.map(([, c]) => c))
  const tick = top > 30 ? 10 : 5
  const yMax = Math.ceil(top / tick) * tick
  const x = (ms) => PLOT.left + ((PLOT.right - PLOT.left) * ms) / lengthMs
  const y = (count) => PLOT.bottom - ((PLOT.bottom - PLOT.top) * count) / yMax
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" ${FONT} font-size="12" fill="${COLORS.text}">`,
    `<title>${esc(data.title)}</title>`,
    `<rect width="${W}" height="${H}" rx="6" fill="#ffffff"/>`,
    text(24, 32, data.title, 'font-size="16" font-weight="600"'),
    ...data.lines.map((line, i) => text(24, 54 + 18 * i, line, `fill="${COLORS.muted}"`)),
    legend(data, 24, 102),
    ...grid(x, y, yMax, tick, lengthMs),
    ...bars(x, y, data.sent, binMs, COLORS.sent),
    ...bars(x, y, data.admitted, binMs, COLORS.admitted),
    `<path d="${stepPath(x, y, data.steps, lengthMs)}" stroke="${COLORS.window}" stroke-width="2" fill="none" stroke-linejoin="round"/>`,
    `<path d="M${n(PLOT.left)} ${n(y(limit))}H${n(PLOT.right)}" stroke="${COLORS.limit}" stroke-width="2" stroke-dasharray="6 4" fill="none"/>`,
    `</svg>`,
    '',
  ].join('\n')
}

function legend(data, left, baseline) {
  const win = seconds(data.windowMs)
  const bin = `${data.binMs} ms`
  const items = [
    ['box', COLORS.sent, `sent per ${bin}`],
    ['box', COLORS.admitted, `admitted per ${bin}`],
    ['line', COLORS.window, `admitted in the last ${win}`],
    ['dash', COLORS.limit, `limit: ${data.limit} per ${win}`],
  ]
  const out = []
  let at = left
  for (const [kind, color, label] of items) {
    if (kind === 'box')
      out.push(`<rect x="${n(at)}" y="${baseline - 10}" width="12" height="12" fill="${color}"/>`)
    else
      out.push(
        `<path d="M${n(at)} ${baseline - 4}h16" stroke="${color}" stroke-width="2"${kind === 'dash' ? ' stroke-dasharray="5 3"' : ''}/>`,
      )
    const gap = kind === 'box' ? 18 : 22
    out.push(text(at + gap, baseline, label))
    at += gap + label.length * 6.6 + 20
  }
  return out.join('\n')
}

function grid(x, y, yMax, tick, lengthMs) {
  const out = []
  for (let c = 0; c <= yMax; c += tick) {
    out.push(`<path d="M${PLOT.left} ${n(y(c))}H${PLOT.right}" stroke="${COLORS.grid}"/>`)
    out.push(text(PLOT.left - 8, y(c) + 4, String(c), 'text-anchor="end"'))
  }
  for (let ms = 0; ms <= lengthMs; ms += 500) {
    const edge = ms % 1000 === 0
    out.push(
      `<path d="M${n(x(ms))} ${PLOT.top}V${PLOT.bottom}" stroke="${edge ? COLORS.axis : COLORS.grid}"${edge ? ' stroke-dasharray="2 3"' : ''}/>`,
    )
    out.push(text(x(ms), PLOT.bottom + 18, seconds(ms), 'text-anchor="middle"'))
  }
  out.push(`<path d="M${PLOT.left} ${PLOT.bottom}H${PLOT.right}" stroke="${COLORS.axis}"/>`)
  out.push(text((PLOT.left + PLOT.right) / 2, H - 14, 'time', 'text-anchor="middle"'))
  const mid = (PLOT.top + PLOT.bottom) / 2
  out.push(text(18, mid, 'requests', `text-anchor="middle" transform="rotate(-90 18 ${n(mid)})"`))
  return out
}

function bars(x, y, counts, binMs, color) {
  const out = []
  for (const [i, count] of counts.entries()) {
    if (count === 0) continue
    const left = x(i * binMs) + 1.5
    const width = x((i + 1) * binMs) - 1.5 - left
    out.push(
      `<rect x="${n(left)}" y="${n(y(count))}" width="${n(width)}" height="${n(y(0) - y(count))}" fill="${color}"/>`,
    )
  }
  return out
}

function stepPath(x, y, steps, lengthMs) {
  let d = `M${n(x(0))} ${n(y(0))}`
  for (const [ms, count] of steps) d += `H${n(x(ms))}V${n(y(count))}`
  return `${d}H${n(x(lengthMs))}`
}
