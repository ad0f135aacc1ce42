// MemoryStore's blocks (a limiter's `block`): the end of each blocked key, per namespace.
import type { StoreDecision } from './store.js'

/**
 * The blocks of every namespace, swept with the rest of the store's state. Only namespaces with
 * a block hold a map (a store sees many namespaces), and a store with no block at all answers
 * `left` with one comparison.
 */
export class MemoryBlocks {
  // namespace -> user key (bounded) -> when its block ends (ms, the store's clock)
  readonly #spaces = new Map<string, Map<string, number>>()
  #count = 0

  /** How many keys are blocked (including ended blocks not yet swept). */
  get size(): number {
    return this.#count
  }

  /** Whether `key` holds a block (ended or not). */
  has(namespace: string, key: string): boolean {
    return this.#spaces.get(namespace)?.has(key) === true
  }

  /** The ms the block on `key` has left at `nowMs` (0: none). */
  left(namespace: string, key: string, nowMs: number): number {
    if (this.#count === 0) return 0
    const endMs = this.#spaces.get(namespace)?.get(key)
    return endMs === undefined || endMs <= nowMs ? 0 : endMs - nowMs
  }

  /** Blocks `key` until `endMs`, or keeps a block that ends later; returns the later end. */
  add(namespace: string, key: string, endMs: number): number {
    let ends = this.#spaces.get(namespace)
    if (ends === undefined) {
      ends = new Map()
      this.#spaces.set(namespace, ends)
    }
    const held = ends.get(key)
    if (held !== undefined && held >= endMs) return held
    if (held === undefined) this.#count++
    ends.set(key, endMs)
    return endMs
  }

  delete(namespace: string, key: string): void {
    const ends = this.#spaces.get(namespace)
    if (ends === undefined || !ends.delete(key)) return
    this.#count--
    if (ends.size === 0) this.#spaces.delete(namespace)
  }

  /** Drops the blocks that ended by `nowMs`; returns how many. */
  sweep(nowMs: number): number {
    let dropped = 0
    for (const [namespace, ends] of this.#spaces) {
      for (const [key, endMs] of ends) {
        if (endMs <= nowMs) {
          ends.delete(key)
          dropped++
        }
      }
      if (ends.size === 0) this.#spaces.delete(namespace)
    }
    this.#count -= dropped
    return dropped
  }

  /**
   * Drops the `count` oldest blocks (by when each key was first blocked, oldest namespace
   * first), as the store drops its oldest counters when full; returns how many.
   */
  dropOldest(count: number): number {
    let dropped = 0
    for (const [namespace, ends] of this.#spaces) {
      for (const key of ends.keys()) {
        if (dropped >= count) break
        ends.delete(key)
        dropped++
      }
      if (ends.size === 0) this.#spaces.delete(namespace)
      if (dropped >= count) break
    }
    this.#count -= dropped
    return dropped
  }

  clear(): void {
    this.#spaces.clear()
    this.#count = 0
  }
}

/**
 * A blocked request's decision from what its policy holds now (a peek): refused, nothing
 * remaining, no reset or Retry-After before the block ends (nor before the policy's own). The
 * twin of lua/lib/block.lua's `blocked_decision`.
 */
export function blockedDecision(peek: StoreDecision, leftMs: number): StoreDecision {
  return {
    allowed: false,
    remaining: 0,
    resetMs: Math.max(peek.resetMs, leftMs),
    retryAfterMs: Math.max(peek.retryAfterMs, leftMs),
    ticket: undefined,
  }
}
