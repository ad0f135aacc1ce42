// The page's actions: block, unblock/reset, and the threshold preview, each audited on the
// `limiter:audit` diagnostics channel. The caller has checked authorization and the CSRF token.
import { channel } from 'node:diagnostics_channel'
import { type Limiter, parseDuration } from '@limiter/core'
import type { Resolved } from './labels.js'
import type { InspectorState } from './state.js'
import { previewThreshold } from './state.js'

/** The channel of {@link AuditEvent}s. */
export const AUDIT_CHANNEL = 'limiter:audit'
const auditChannel = channel(AUDIT_CHANNEL)

/** Published on `limiter:audit` for every action taken from the page. */
export interface AuditEvent {
  readonly action: 'block' | 'reset' | 'preview'
  readonly limiter?: string | undefined
  readonly key?: string | undefined
  readonly durationMs?: number | undefined
  readonly limit?: number | undefined
  /** The Fetch request, and the host framework's own (to log who did it). */
  readonly request: Request
  readonly hostRequest: unknown
}

export interface ActionResult {
  readonly status: number
  readonly message: string
  readonly body: Record<string, unknown>
}

export type Fields = Record<string, string>

function fail(message: string): ActionResult {
  return { status: 400, message, body: { error: message } }
}

function limiterOf(limiters: readonly Limiter[], fields: Fields): Limiter | undefined {
  if (limiters.length === 1 && fields.limiter === undefined) return limiters[0]
  return limiters.find((l) => l.name === fields.limiter)
}

/** What the actions work with. */
export interface ActionContext {
  readonly limiters: readonly Limiter[]
  readonly state: () => Promise<InspectorState>
  /** The raw key of a label the page shows (`k:3f9a…`), the text as typed, or why neither. */
  readonly resolveKey: (typed: string) => Promise<Resolved>
  readonly audit: { request: Request; hostRequest: unknown }
}

export async function runAction(
  action: string,
  fields: Fields,
  context: ActionContext,
): Promise<ActionResult | undefined> {
  const { audit } = context
  if (action === 'preview') return preview(fields, await context.state(), audit)
  if (action !== 'block' && action !== 'reset') return undefined
  const limiter = limiterOf(context.limiters, fields)
  if (limiter === undefined) return fail(`no limiter named ${JSON.stringify(fields.limiter ?? '')}`)
  const typed = fields.key ?? ''
  if (typed === '') return fail('a key is required')
  // Messages name the key as typed (a label stays a label); the audit event has the raw key.
  const resolved = await context.resolveKey(typed)
  if (resolved.key === undefined)
    return { status: resolved.status, message: resolved.error, body: { error: resolved.error } }
  const { key } = resolved
  if (action === 'reset') {
    await limiter.reset(key)
    publish({ action, limiter: limiter.name, key, ...audit })
    return {
      status: 200,
      message: `Reset ${typed} in ${limiter.name} (any block lifted).`,
      body: { ok: true },
    }
  }
  const durationMs = blockDuration(fields.duration ?? '15m')
  if (typeof durationMs === 'string') return fail(durationMs)
  await limiter.block(key, durationMs)
  publish({ action, limiter: limiter.name, key, durationMs, ...audit })
  return {
    status: 200,
    message: `Blocked ${typed} in ${limiter.name} for ${durationMs} ms.`,
    body: { ok: true, durationMs },
  }
}

// What core's `block` takes at most (a year): checked here, so a longer one is the caller's
// error (400), not a failed action.
const MAX_BLOCK_MS = 365 * 86_400_000

/** The duration in ms, or why it is refused (naming the value as typed). */
function blockDuration(typed: string): number | string {
  try {
    return parseDuration(typed, 'duration', MAX_BLOCK_MS)
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    return `The duration ${JSON.stringify(typed)} is refused: ${reason}`
  }
}

function preview(
  fields: Fields,
  state: InspectorState,
  audit: { request: Request; hostRequest: unknown },
): ActionResult {
  const limit = Number(fields.limit)
  if (!Number.isInteger(limit) || limit < 1) return fail('limit must be a positive integer')
  const policies = state.policies.map((p) => ({
    policy: p.id,
    limit: p.limit,
    ...previewThreshold(p, limit),
  }))
  publish({ action: 'preview', limit, ...audit })
  const text = policies
    .map((p) => `${p.policy}: ${p.keys} of its ${p.of} top refused keys (limit ${p.limit} now)`)
    .join('; ')
  return {
    status: 200,
    message: `A limit of ${limit} would have refused ${text}.`,
    body: { limit, policies },
  }
}

function publish(event: AuditEvent): void {
  if (auditChannel.hasSubscribers) auditChannel.publish(event)
}
