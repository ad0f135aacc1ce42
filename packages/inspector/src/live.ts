// The live part of the page (policies, blocks, charts, circuits, top refused keys), rendered from the
// JSON state on the server and, every 2 s, in the browser: these functions are also sent as the
// page's script (by their source), so each is self-contained: no imports, no module constants,
// only each other by name.
import type { InspectorState, PolicyState } from './state.js'

/** What the live part needs beside the state: the API's path, and the actions' CSRF token. */
export interface LiveParts {
  readonly api: string
  readonly csrf: string
  readonly actions: boolean
}

export function esc(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

export function durationText(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`
  if (ms % 60_000 === 0) return `${ms / 60_000}m`
  if (ms % 1000 === 0) return `${ms / 1000}s`
  return `${ms}ms`
}

export function chartSvg(rates: PolicyState['rates'], stepSeconds: number): string {
  const colors: Record<string, string> = {
    allowed: '#2e7d32',
    refused: '#c62828',
    shadow: '#ef6c00',
    failOpen: '#6a1b9a',
    storeErrors: '#616161',
  }
  const width = 720
  const height = 120
  let max = 1
  for (const name in rates)
    for (const v of rates[name as keyof typeof rates]) max = Math.max(max, v)
  const lines: string[] = []
  for (const name in rates) {
    const points = rates[name as keyof typeof rates]
    if (!points.some((v) => v > 0)) continue
    const step = width / Math.max(1, points.length - 1)
    const d = points
      .map((v, i) => `${Math.round(i * step)},${Math.round(height - (v / max) * height)}`)
      .join(' ')
    lines.push(
      `<polyline fill="none" stroke="${colors[name]}" stroke-width="1.5" points="${d}"><title>${name}</title></polyline>`,
    )
  }
  const legend = Object.keys(colors)
    .map(
      (name, i) =>
        `<text x="${4 + i * 110}" y="${height + 16}" fill="${colors[name]}">${name}</text>`,
    )
    .join('')
  return `<svg class="chart" viewBox="0 0 ${width} ${height + 22}" width="${width}" height="${height + 22}" role="img" aria-label="decisions per second, last 15 minutes (${stepSeconds} s steps, peak ${max.toFixed(1)}/s)"><rect width="${width}" height="${height}" fill="#fafafa" stroke="#ddd"/><text x="${width - 4}" y="12" text-anchor="end" fill="#555">${max.toFixed(1)}/s</text><text x="4" y="12" fill="#555">15 min ago</text><text x="${width - 4}" y="${height - 4}" text-anchor="end" fill="#555">now</text>${lines.join('')}${legend}</svg>`
}

export function topTable(policy: PolicyState): string {
  const spans = ['1m', '5m', '15m'] as const
  const rows: string[] = []
  for (let i = 0; i < 10; i++) {
    const cells = spans.map((span) => {
      const hit = policy.top[span][i]
      return hit === undefined
        ? '<td></td><td></td>'
        : `<td><code>${esc(hit.key)}</code></td><td class="n">${hit.count}${hit.error > 0 ? ` <small>±${hit.error}</small>` : ''}</td>`
    })
    if (spans.every((span) => policy.top[span][i] === undefined)) break
    rows.push(`<tr>${cells.join('')}</tr>`)
  }
  const head = spans
    .map((span) => `<th>key, last ${span} (${policy.refused[span]} refused)</th><th>refused</th>`)
    .join('')
  const body = rows.length > 0 ? rows.join('') : '<tr><td colspan="6">No refusals.</td></tr>'
  return `<table class="top"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`
}

export function blocksTable(state: InspectorState, parts: LiveParts): string {
  if (state.blocks.length === 0)
    return '<p>No key blocked or penalized (as far as this page has seen: see the README).</p>'
  // at most 20 rows on the page (about 0.4 kB each): the JSON API lists them all
  const rows = state.blocks.slice(0, 20).map((b) => {
    const left = Math.max(0, Math.ceil((b.untilMs - state.nowMs) / 1000))
    const action = parts.actions
      ? `<td><form method="post" action="${esc(parts.api)}/reset"><input type="hidden" name="csrf" value="${esc(parts.csrf)}"><input type="hidden" name="limiter" value="${esc(b.limiter)}"><input type="hidden" name="key" value="${esc(b.key)}"><button>Unblock</button></form></td>`
      : ''
    return `<tr><td>${esc(b.limiter)}</td><td><code>${esc(b.key)}</code></td><td>${b.kind}</td><td>${new Date(b.untilMs).toISOString()}${b.unverified ? ' (store failed: as recorded)' : ''}</td><td class="n">${left} s</td>${action}</tr>`
  })
  const more =
    state.blocks.length > 20
      ? `<p class="note">and ${state.blocks.length - 20} more (all in <code>api/state</code>).</p>`
      : ''
  return `<table class="blocks"><thead><tr><th>limiter</th><th>key</th><th>kind</th><th>refused until</th><th>left</th>${parts.actions ? '<th></th>' : ''}</tr></thead><tbody>${rows.join('')}</tbody></table>${more}`
}

export function renderLive(state: InspectorState, parts: LiveParts): string {
  const policyRows = state.policies
    .map(
      (p) =>
        `<tr><td>${esc(p.limiter)}</td><td>${esc(p.policy)}</td><td>${esc(p.algorithm)}</td><td class="n">${p.limit}</td><td>${durationText(p.windowMs)}</td><td class="n">${p.burst}</td><td>${esc(p.mode)}</td></tr>`,
    )
    .join('')
  const sections = state.policies
    .map(
      (p) =>
        `<section class="policy" data-policy="${esc(p.id)}"><h3>${esc(p.id)}</h3>${chartSvg(p.rates, state.stepSeconds)}${topTable(p)}</section>`,
    )
    .join('')
  const circuits =
    state.circuits.length === 0
      ? '<p>Every circuit closed (none has opened since start).</p>'
      : `<table><thead><tr><th>limiter</th><th>domain</th><th>state</th><th>since</th></tr></thead><tbody>${state.circuits
          .map(
            (c) =>
              `<tr><td>${esc(c.limiter)}</td><td>${esc(c.domain || '(the store)')}</td><td class="${c.state}">${c.state}</td><td>${new Date(c.sinceMs).toISOString()}</td></tr>`,
          )
          .join('')}</tbody></table>`
  const scope = state.merged
    ? `the fleet: ${state.processes} process${state.processes === 1 ? '' : 'es'} reporting through Redis`
    : `this process only${state.redisError ? ` (Redis: ${esc(state.redisError)})` : ''}`
  return `<h2>Policies</h2><table><thead><tr><th>limiter</th><th>policy</th><th>algorithm</th><th>limit</th><th>window</th><th>burst</th><th>mode</th></tr></thead><tbody>${policyRows}</tbody></table><h2>Blocks and penalties</h2>${blocksTable(state, parts)}<h2>Circuits</h2>${circuits}<h2>Decisions and top refused keys</h2><p class="note scope">Decisions per second over 15 minutes and top refused keys of ${scope}; each count overestimates by at most N/${state.topK} (± shows the bound per key). Updated ${new Date(state.nowMs).toISOString()}.</p>${sections}`
}

/** The script's source: these functions, then the refresh loop. */
export function liveScript(): string {
  const fns = [esc, durationText, chartSvg, topTable, blocksTable, renderLive]
    .map(String)
    .join('\n')
  return `${fns}
(function () {
  var live = document.getElementById('live')
  var api = live.getAttribute('data-api')
  var parts = { api: api, csrf: live.getAttribute('data-csrf'), actions: live.hasAttribute('data-actions') }
  var url = api + '/state'
  setInterval(function () {
    fetch(url, { credentials: 'same-origin', headers: { accept: 'application/json' } })
      .then(function (r) { return r.ok ? r.json() : null })
      .then(function (state) { if (state) live.innerHTML = ${renderLive.name}(state, parts) })
      .catch(function () {})
  }, 2000)
})()`
}
