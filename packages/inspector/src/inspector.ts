// The operator's page as one Fetch handler: authorization, CSRF, the HTML page, its JSON API and
// the actions. Adapters only mount it, passing their own request and the mount path.
import { randomBytes } from 'node:crypto'
import type { Limiter } from '@limiter/core'
import { type Fields, runAction } from './actions.js'
import { BlockRegistry } from './blocks.js'
import { cookieToken, csrfValid, newToken, tokenCookie } from './csrf.js'
import { Fleet } from './fleet.js'
import { keyOfLabel, type Resolved } from './labels.js'
import { esc } from './live.js'
import { lookupHtml, lookupKey } from './lookup.js'
import { MAX_BODY_BYTES } from './node.js'
import { noticeOf, noticeQuery } from './notice.js'
import { type InspectorOptions, type ResolvedOptions, resolveOptions } from './options.js'
import { pagePolicy, renderPage } from './page.js'
import { Recorder } from './recorder.js'
import { processId } from './redis-sync.js'
import {
  buildState,
  type InspectorState,
  localSource,
  redisSource,
  type SummarySource,
} from './state.js'

/** Per request: where the page is mounted (`''` or `'/ops'`) and the framework's own request. */
export interface HandleContext<H = unknown> {
  readonly mountPath: string
  readonly hostRequest: H
}

/** The page's core: one Fetch handler, plus `close()` to stop recording. */
export interface Inspector<H = unknown> {
  handle(request: Request, context: HandleContext<H>): Promise<Response>
  /** The state the JSON API answers (for tests and custom views). */
  state(): Promise<InspectorState>
  /** Stops recording (unsubscribes from the channels, stops writing to Redis). */
  close(): void
}

/** The page's two ways into the recordings. */
interface Views {
  state(): Promise<InspectorState>
  resolveKey(typed: string): Promise<Resolved>
  /** Signs the notices the page shows after an action (the `secret`, or this process's own). */
  readonly noticeKey: string
}

let warned = false

/** The operator's page for `limiters`: see the README for mounting it. */
export function inspector<H = unknown>(options: InspectorOptions<H>): Inspector<H> {
  const resolved = resolveOptions(options)
  if (resolved.authorize === undefined && !warned) {
    warned = true
    process.emitWarning(
      'The limiter inspector is served without `authorize` (`unsafe: true`): anyone who can reach it sees the keys and limits. Use this for local development only.',
      { code: 'LIMITER_INSPECTOR_UNSAFE' },
    )
  }
  const recorder = new Recorder(resolved.limiters, resolved.topK, Date.now)
  recorder.start()
  const shared = resolved as ResolvedOptions<unknown>
  const { source, blocks, stop } = recording(recorder, shared)
  const state = () => buildState(recorder, blocks, shared, source, Date.now())
  const views: Views = {
    state,
    resolveKey: (typed) => keyOfLabel(recorder, shared, source, typed, Date.now(), blocks.keys()),
    noticeKey: resolved.secret ?? randomBytes(32).toString('base64url'),
  }
  return {
    handle: (request, context) => handle(request, context, resolved, views),
    state,
    close: () => {
      stop()
      recorder.stop()
    },
  }
}

/**
 * The blocks' registry and where the page reads from: with Redis, every process writes its
 * recordings every 5 s whether or not it serves the page, and its blocks soon after each.
 */
function recording(
  recorder: Recorder,
  options: ResolvedOptions<unknown>,
): { source: SummarySource; blocks: BlockRegistry; stop: () => void } {
  if (options.redis === undefined) {
    const blocks = new BlockRegistry(options.limiters)
    blocks.start()
    return { source: localSource(), blocks, stop: () => blocks.stop() }
  }
  let fleet: Fleet | undefined
  let soon: NodeJS.Timeout | undefined
  const blocks = new BlockRegistry(options.limiters, () => {
    soon ??= setTimeout(() => {
      soon = undefined
      fleet?.writeBlocks(Date.now()).catch(() => {})
    }, 50).unref()
  })
  blocks.start()
  fleet = new Fleet(recorder, blocks, options, processId())
  const timer = setInterval(() => {
    fleet.write(Date.now()).catch(() => {})
  }, 5000).unref()
  const stop = () => {
    clearInterval(timer)
    clearTimeout(soon)
    blocks.stop()
  }
  return { source: redisSource(options, fleet.source()), blocks, stop }
}

async function handle<H>(
  request: Request,
  context: HandleContext<H>,
  options: ResolvedOptions<H>,
  views: Views,
): Promise<Response> {
  const mountPath = context.mountPath.replace(/\/+$/, '')
  const url = new URL(request.url)
  if (!url.pathname.startsWith(mountPath)) return text(404, 'Not found')
  const path = url.pathname.slice(mountPath.length).replace(/\/+$/, '') || '/'
  if (options.authorize !== undefined) {
    const allowed = await options.authorize(request, context.hostRequest)
    if (allowed === null || allowed === undefined) return text(401, 'Unauthorized')
    if (allowed !== true) return text(403, 'Forbidden')
  }
  if (request.method === 'GET' || request.method === 'HEAD') {
    if (path === '/') return page(request, url, mountPath, options, views)
    if (path === '/api/state') return json(200, await views.state())
    if (path === '/api/key') {
      const typed = url.searchParams.get('key') ?? ''
      const resolved = await views.resolveKey(typed)
      if (resolved.key === undefined) return json(resolved.status, { error: resolved.error })
      return json(200, await lookupKey(options.limiters, resolved.key, typed))
    }
    return text(404, 'Not found')
  }
  if (request.method !== 'POST' || !path.startsWith('/api/')) return text(405, 'Method not allowed')
  return post(request, url, { mountPath, path, hostRequest: context.hostRequest }, options, views)
}

/** A POST under `api/`: the checks (actions on, same origin, size, CSRF), then the action. */
async function post<H>(
  request: Request,
  url: URL,
  at: { mountPath: string; path: string; hostRequest: unknown },
  options: ResolvedOptions<H>,
  views: Views,
): Promise<Response> {
  if (!options.actions) return text(403, 'Actions are disabled (`actions: true` enables them)')
  if (crossOrigin(request, url)) return text(403, 'Cross-origin POST refused')
  const fields = await readFields(request)
  if (fields === undefined) return text(413, `Request body over ${MAX_BODY_BYTES / 1024} kB`)
  if (!csrfValid(request, request.headers.get('x-csrf-token') ?? fields.csrf, options.secret))
    return text(403, 'Missing or wrong CSRF token')
  const { hostRequest } = at
  const result = await runAction(at.path.slice('/api/'.length), fields, {
    limiters: options.limiters,
    state: views.state,
    resolveKey: views.resolveKey,
    audit: { request, hostRequest },
  }).catch((error: unknown) => {
    // A store that fails or cannot block (ERR_LIMITER_UNSUPPORTED): say so, do not throw.
    const message = `The action failed: ${error instanceof Error ? error.message : String(error)}`
    return { status: 502, message, body: { error: message } }
  })
  if (result === undefined) return text(404, 'Not found')
  if (wantsHtml(request))
    return new Response(null, {
      status: 303,
      headers: { location: `${at.mountPath}/${noticeQuery(views.noticeKey, result.message)}` },
    })
  return json(result.status, result.body)
}

async function page<H>(
  request: Request,
  url: URL,
  mountPath: string,
  options: ResolvedOptions<H>,
  views: Views,
): Promise<Response> {
  const existing = cookieToken(request, options.secret)
  const csrf = existing ?? newToken(options.secret)
  const nonce = randomBytes(16).toString('base64')
  const key = url.searchParams.get('key')
  const lookup =
    key === null || key === '' ? undefined : { key, html: await lookupPart(key, options, views) }
  const names = options.limiters.map((l: Limiter) => l.name)
  const html = renderPage(
    await views.state(),
    {
      apiPath: `${mountPath}/api`,
      selfPath: `${mountPath}/`,
      csrf,
      nonce,
      actions: options.actions,
      message: noticeOf(views.noticeKey, url),
      lookup,
    },
    names,
  )
  const headers = new Headers({
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': pagePolicy(nonce),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'same-origin',
  })
  if (existing === undefined)
    headers.append('set-cookie', tokenCookie(csrf, mountPath, url.protocol === 'https:'))
  return new Response(request.method === 'HEAD' ? null : html, { status: 200, headers })
}

async function lookupPart<H>(
  typed: string,
  options: ResolvedOptions<H>,
  views: Views,
): Promise<string> {
  const resolved = await views.resolveKey(typed)
  if (resolved.key === undefined) return `<p class="msg">${esc(resolved.error)}</p>`
  return lookupHtml(await lookupKey(options.limiters, resolved.key, typed))
}

/** The POST's fields, or undefined if its body is over `MAX_BODY_BYTES`. */
// The body as text, read no further than MAX_BODY_BYTES (undefined past them): a chunked body
// has no Content-Length to refuse it by, and request.text() would hold all of it first.
async function boundedText(request: Request): Promise<string | undefined> {
  if (request.body === null) return ''
  const chunks: Uint8Array[] = []
  let bytes = 0
  const reader = request.body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    bytes += value.byteLength
    if (bytes > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => undefined)
      return undefined
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}

async function readFields(request: Request): Promise<Fields | undefined> {
  if (Number(request.headers.get('content-length') ?? 0) > MAX_BODY_BYTES) return undefined
  const type = request.headers.get('content-type') ?? ''
  const body = await boundedText(request)
  if (body === undefined) return undefined
  if (type.includes('application/json')) {
    try {
      const parsed: unknown = JSON.parse(body)
      if (parsed === null || typeof parsed !== 'object') return {}
      return Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, String(v)]))
    } catch {
      return {}
    }
  }
  return Object.fromEntries(new URLSearchParams(body))
}

// Defence in depth beside the token: a browser's POST from another site names that site in
// `Origin` (hosts compared: a TLS proxy in front makes the schemes differ).
function crossOrigin(request: Request, url: URL): boolean {
  const origin = request.headers.get('origin')
  // Absent (a client that is no browser, or an old one): the token decides alone. 'null' (a
  // sandboxed frame, a cross-origin redirect, a page sent with `no-referrer`) is refused: the
  // page's own forms and script send its origin (it is served with `same-origin`).
  if (origin === null) return false
  if (origin === 'null') return true
  try {
    return new URL(origin).host !== url.host
  } catch {
    return true
  }
}

function wantsHtml(request: Request): boolean {
  const type = request.headers.get('content-type') ?? ''
  return (
    type.includes('application/x-www-form-urlencoded') &&
    (request.headers.get('accept') ?? '').includes('text/html')
  )
}

function text(status: number, body: string): Response {
  return new Response(body, {
    status,
    headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
  })
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  })
}
