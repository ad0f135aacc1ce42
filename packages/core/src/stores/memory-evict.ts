// What MemoryStore drops when it is full: its oldest keys, never one that holds a live lease.
import type { ConcurrencyState } from '../algorithms/concurrency.js'

/** A key's state and when it is empty again (MemoryStore's entry). */
export interface HeldEntry {
  readonly state: unknown
  readonly expiresAtMs: number
}

// Whether `entry` holds a concurrency lease still live at `nowMs`: its calls are in flight, and
// forgetting them would admit more than `limit` at once.
function holdsLease(entry: HeldEntry, nowMs: number): boolean {
  if (entry.expiresAtMs <= nowMs) return false
  const slots = (entry.state as Partial<ConcurrencyState> | undefined)?.slots
  return slots instanceof Map && slots.size > 0
}

/**
 * Drops up to `count` keys from `spaces`, the oldest inserted first in each, passing over the
 * keys that hold a live lease (each ends at its release or `window` after it was taken).
 * Answers how many it dropped, which is fewer than `count` when leases hold the rest.
 */
export function evictOldest(
  spaces: Iterable<Map<string, HeldEntry>>,
  count: number,
  nowMs: number,
): number {
  let dropped = 0
  for (const space of spaces) {
    for (const [key, entry] of space) {
      if (dropped >= count) return dropped
      if (holdsLease(entry, nowMs)) continue
      space.delete(key)
      dropped++
    }
  }
  return dropped
}
