// A bounded process-local cache of keys a remote store has refused, until the store's own
// Retry-After: a hot key far over its limit is answered without a round trip.
import type { Decision } from './decision.js'

interface Blocked {
  readonly need: number
  readonly untilMs: number
  readonly resetAtMs: number
}

/** Remembers refusals; answers only what the store itself would refuse. */
export interface BlockedCache {
  /** The cached refusal for a request of `need` (cost, or 1 for a peek), if still blocked. */
  get(key: string, need: number, nowMs: number, limit: number): Decision | undefined
  /** Records a refusal decided no earlier than `sentAtMs`. */
  add(key: string, need: number, sentAtMs: number, decision: Decision): void
  delete(key: string): void
}

/**
 * Creates a cache of at most `maxKeys` blocked keys (the oldest entry goes first when full).
 * An entry is kept only for a refusal with nothing remaining, and lasts until `sentAtMs +
 * retryAfterMs`: the store decided at or after `sentAtMs`, so the entry ends no later than the
 * store would start admitting. It answers only requests of the same cost, with the decision the
 * store would give: remaining 0, and reset and Retry-After counted down from the store's.
 */
export function createBlockedCache(maxKeys: number): BlockedCache {
  const entries = new Map<string, Blocked>()
  return {
    get(key, need, nowMs, limit) {
      const entry = entries.get(key)
      if (entry === undefined) return undefined
      if (entry.untilMs <= nowMs) {
        entries.delete(key)
        return undefined
      }
      if (entry.need !== need) return undefined
      return {
        allowed: false,
        limit,
        remaining: 0,
        resetMs: Math.max(0, Math.ceil(entry.resetAtMs - nowMs)),
        retryAfterMs: Math.ceil(entry.untilMs - nowMs),
        source: 'blocked-cache',
      }
    },
    add(key, need, sentAtMs, decision) {
      if (decision.allowed || decision.remaining !== 0 || decision.retryAfterMs <= 0) return
      if (entries.size >= maxKeys && !entries.has(key)) {
        const oldest = entries.keys().next()
        if (oldest.done !== true) entries.delete(oldest.value)
      }
      entries.set(key, {
        need,
        untilMs: sentAtMs + decision.retryAfterMs,
        resetAtMs: sentAtMs + decision.resetMs,
      })
    },
    delete(key) {
      entries.delete(key)
    },
  }
}
