// Number formatting for tables: rates, ratios, milliseconds, bytes.

const ok = (n) => typeof n === 'number' && Number.isFinite(n)

/** 1234567 -> "1.23M", 85210 -> "85.2k". */
export function rate(n) {
  if (!ok(n)) return '-'
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M`
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`
  return n.toFixed(0)
}

/** 0.8523 -> "0.85x". */
export function times(n) {
  return ok(n) ? `${n.toFixed(2)}x` : '-'
}

/** Milliseconds with sensible precision. */
export function ms(n) {
  if (!ok(n)) return '-'
  return n >= 10 ? n.toFixed(0) : n >= 1 ? n.toFixed(1) : n.toFixed(2)
}

/** A plain number with `digits` decimals. */
export function num(n, digits = 1) {
  return ok(n) ? n.toFixed(digits) : '-'
}

/** 0.999 -> "99.9%". */
export function pct(n) {
  return ok(n) ? `${(n * 100).toFixed(n === 0 || n === 1 ? 0 : 1)}%` : '-'
}

/** A markdown table from a header row and body rows. */
export function table(header, rows) {
  const line = (cells) => `| ${cells.join(' | ')} |`
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n')
}
