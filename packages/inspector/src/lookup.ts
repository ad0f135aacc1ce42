// One key's state under each policy of each limiter, by `limiter.peek` (counts nothing).
import type { Limiter } from '@limiter/core'
import { esc } from './live.js'

export interface KeyState {
  readonly key: string
  readonly limiters: Array<{
    readonly limiter: string
    readonly allowed?: boolean
    readonly error?: string
    readonly policies: Array<{
      readonly policy: string
      readonly allowed: boolean
      readonly remaining: number
      readonly limit: number
      readonly resetMs: number
      readonly retryAfterMs: number
    }>
  }>
}

/** `shown`: the key as typed (a label stays a label in the answer). */
export async function lookupKey(
  limiters: readonly Limiter[],
  key: string,
  shown = key,
): Promise<KeyState> {
  if (key === '') return { key: shown, limiters: [] }
  const out: KeyState['limiters'] = []
  for (const limiter of limiters) {
    try {
      const decision = await limiter.peek(key)
      out.push({
        limiter: limiter.name,
        allowed: decision.allowed,
        policies: decision.policies.map((p) => ({
          policy: p.name,
          allowed: p.allowed,
          remaining: p.remaining,
          limit: p.limit,
          resetMs: p.resetMs,
          retryAfterMs: p.retryAfterMs,
        })),
      })
    } catch (error) {
      out.push({ limiter: limiter.name, error: String(error), policies: [] })
    }
  }
  return { key: shown, limiters: out }
}

export function lookupHtml(state: KeyState): string {
  const rows = state.limiters.flatMap((l) =>
    l.error !== undefined
      ? [`<tr><td>${esc(l.limiter)}</td><td colspan="5">${esc(l.error)}</td></tr>`]
      : l.policies.map(
          (p) =>
            `<tr><td>${esc(l.limiter)}</td><td>${esc(p.policy)}</td><td>${p.allowed ? 'allowed' : '<b>refused</b>'}</td><td class="n">${p.remaining} / ${p.limit}</td><td class="n">${p.resetMs} ms</td><td class="n">${p.retryAfterMs} ms</td></tr>`,
        ),
  )
  return `<h2>Key <code>${esc(state.key)}</code></h2><table><thead><tr><th>limiter</th><th>policy</th><th>a request now</th><th>remaining</th><th>full again in</th><th>retry after</th></tr></thead><tbody>${rows.join('')}</tbody></table>`
}
