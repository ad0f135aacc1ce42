// The page: server-rendered HTML that works without JavaScript (forms POST and redirect back),
// its stylesheet and script inline (no CDN, no network), under a strict Content-Security-Policy.
import { esc, liveScript, renderLive } from './live.js'
import type { InspectorState } from './state.js'

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;color:#222;max-width:1200px}
h1{font-size:1.3rem}h2{font-size:1.1rem;margin-top:1.6rem}h3{font-size:1rem;margin:1.2rem 0 .3rem}
table{border-collapse:collapse;margin:.3rem 0}td,th{border:1px solid #ddd;padding:2px 8px;text-align:left}
th{background:#f3f3f3;font-weight:600}.n{text-align:right}.open{color:#c62828;font-weight:600}
.closed{color:#2e7d32}.note{color:#555}.msg{background:#fff8e1;border:1px solid #ffe082;padding:6px 10px}
form{display:inline-block;margin:.3rem 1rem .3rem 0}input{font:inherit}.chart{display:block;max-width:100%;height:auto}
svg text{font-size:11px}code{font-size:12px}`

export interface PageParts {
  readonly apiPath: string
  readonly selfPath: string
  readonly csrf: string
  readonly nonce: string
  readonly actions: boolean
  readonly message?: string | undefined
  readonly lookup?: { key: string; html: string } | undefined
}

function actionForms(parts: PageParts, limiterNames: readonly string[]): string {
  if (!parts.actions)
    return '<p class="note">Read-only: pass <code>actions: true</code> to block, unblock and preview limits.</p>'
  const token = `<input type="hidden" name="csrf" value="${esc(parts.csrf)}">`
  const limiter = `<select name="limiter">${limiterNames.map((n) => `<option>${esc(n)}</option>`).join('')}</select>`
  const api = parts.apiPath
  return `<h2>Actions</h2>
<form method="post" action="${esc(api)}/block">${token}${limiter} <input name="key" placeholder="key" required> <input name="duration" value="15m" size="5"> <button>Block</button></form>
<form method="post" action="${esc(api)}/reset">${token}${limiter} <input name="key" placeholder="key" required> <button>Unblock / reset</button></form>
<form method="post" action="${esc(api)}/preview">${token}<input name="limit" type="number" min="1" placeholder="limit N" required> <button>Preview limit</button></form>`
}

/** The whole page. */
export function renderPage(
  state: InspectorState,
  parts: PageParts,
  limiterNames: readonly string[],
): string {
  const message = parts.message === undefined ? '' : `<p class="msg">${esc(parts.message)}</p>`
  const lookup = parts.lookup === undefined ? '' : parts.lookup.html
  const live = { api: parts.apiPath, csrf: parts.csrf, actions: parts.actions }
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Rate limits</title><link rel="icon" href="data:,"><style nonce="${parts.nonce}">${STYLE}</style>
<noscript><meta http-equiv="refresh" content="15"></noscript></head><body>
<h1>Rate limits</h1>${message}
<form method="get" action="${esc(parts.selfPath)}"><input name="key" placeholder="a key, as the limiter sees it" size="40" value="${esc(parts.lookup?.key ?? '')}"> <button>Look up (peek, counts nothing)</button></form>
${lookup}
${actionForms(parts, limiterNames)}
<div id="live" data-api="${esc(parts.apiPath)}" data-csrf="${esc(parts.csrf)}"${parts.actions ? ' data-actions' : ''}>${renderLive(state, live)}</div>
<script nonce="${parts.nonce}">${liveScript()}</script>
</body></html>`
}

/** The Content-Security-Policy of the page: nothing from anywhere but itself and its nonce. */
export function pagePolicy(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ')
}
