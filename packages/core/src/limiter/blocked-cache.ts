// A bounded process-local cache of keys a remote store has refused, until the store's own
// Retry-After: a hot key far over its limit is answered without a round trip.

import type { Decision } from '../decision/decision.js'
import { type PolicySet, refusedByConcurrency, trustedMs } from '../policies/limits.js'
import { boundedKey } from '../stores/bounded-key.js'

/** The cache's bounds: keys held, and how long one refusal is trusted. */
export interface BlockedCacheSettings {
  /** 0 turns the cache off. */
  readonly maxKeys: number
  readonly maxMs: number
}

interface Blocked {
  readonly need: number
  /** Until when the refusal is trusted: the store's Retry-After, capped at `maxMs`. */
  readonly untilMs: number
  /** The store's refusal, and the time it was decided no earlier than. */
  readonly decision: Decision
  readonly sentAtMs: number
}

/** A cached refusal: the store's decision, and the ms since it was made. */
export interface BlockedHit {
  readonly decision: Decision
  readonly elapsedMs: number
}

/** Remembers refusals; answers only what the store itself would refuse. */
export interface BlockedCache {
  /** The cached refusal for a request of `need` (cost, or 1 for a peek), if still blocked. */
  get(key: string, need: number, nowMs: number): BlockedHit | undefined
  /**
   * Records a refusal decided no earlier than `sentAtMs`, trusted for at most `trustedMs`
   * (default: its Retry-After; less when the request could pass sooner by waiting).
   */
  add(key: string, need: number, sentAtMs: number, decision: Decision, trustedMs?: number): void
  delete(key: string): void
  /**
   * Forgets the key's refusal, as `delete` does, and any refusal of a call sent no later than
   * `atMs` that comes back after it: a reset, refund, release or block sent at `atMs` changed
   * what the store holds, so a reply decided before it no longer says what the store would.
   */
  clear(key: string, atMs: number): void
}

/**
 * Creates a cache of at most `maxKeys` blocked keys (the oldest entry goes first when full).
 * An entry is kept only for a refusal with nothing remaining, and lasts until `sentAtMs +
 * retryAfterMs` or `sentAtMs + maxMs`, whichever comes first: the store decided at or after
 * `sentAtMs`, so the entry ends no later than the store would start admitting, and a reset or
 * refund made elsewhere is seen within `maxMs`. It answers only requests of the same cost, with
 * the decision the store would give: remaining 0, and reset and Retry-After counted down from
 * the store's. Keys are held within the same byte bound as MemoryStore's (`boundedKey`).
 */
export function createBlockedCache({ maxKeys, maxMs }: BlockedCacheSettings): BlockedCache {
  const entries = new Map<string, Blocked>()
  // keys cleared (see `clear`), and when: at most maxKeys, the oldest forgotten first; a key's
  // goes once a refusal sent after it comes back (replies of one key arrive in order)
  const cleared = new Map<string, number>()
  const bounded = <V>(map: Map<string, V>, held: string) => {
    if (map.size >= maxKeys && !map.has(held)) {
      const oldest = map.keys().next()
      if (oldest.done !== true) map.delete(oldest.value)
    }
  }
  return {
    get(key, need, nowMs) {
      // A map lookup on a short key; only a key too long to hold whole is hashed, as when added.
      const held = boundedKey(key)
      const entry = entries.get(held)
      if (entry === undefined) return undefined
      if (entry.untilMs <= nowMs) {
        entries.delete(held)
        return undefined
      }
      if (entry.need !== need) return undefined
      return { decision: entry.decision, elapsedMs: nowMs - entry.sentAtMs }
    },
    add(key, need, sentAtMs, decision, trustedMs = decision.retryAfterMs) {
      if (decision.allowed || decision.remaining !== 0 || trustedMs <= 0) return
      const held = boundedKey(key)
      if (cleared.size !== 0) {
        const at = cleared.get(held)
        if (at !== undefined && sentAtMs <= at) return
        cleared.delete(held)
      }
      bounded(entries, held)
      entries.set(held, {
        need,
        untilMs: Math.min(sentAtMs + trustedMs, sentAtMs + maxMs),
        decision,
        sentAtMs,
      })
    },
    delete(key) {
      // called for every admission too: a store with no refusal held pays one comparison
      if (entries.size !== 0) entries.delete(boundedKey(key))
    },
    clear(key, atMs) {
      const held = boundedKey(key)
      entries.delete(held)
      cleared.delete(held)
      bounded(cleared, held)
      cleared.set(held, atMs)
    },
  }
}

/**
 * Records the store's refusals of `set`'s requests in `blocked` (when there is a cache), and
 * passes every decision on. A concurrency policy's refusal is never cached (a release frees a
 * slot at any moment); others for as long as the store would give the same answer (`trustedMs`).
 * An admission forgets the key's refusal: the store admitted a request of another cost (a
 * smaller one), which moved the key's state, so the refusal's reset and Retry-After are no
 * longer the store's.
 */
export function remembering(
  blocked: BlockedCache | undefined,
  set: PolicySet,
): (key: string, need: number, sentAtMs: number, decision: Decision) => Decision {
  if (blocked === undefined) return (_key, _need, _sentAtMs, decision) => decision
  return (key, need, sentAtMs, decision) => {
    if (decision.allowed) blocked.delete(key)
    else if (!refusedByConcurrency(set.policies, decision))
      blocked.add(key, need, sentAtMs, decision, trustedMs(set, decision, need))
    return decision
  }
}
