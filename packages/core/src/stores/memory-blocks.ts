// MemoryStore's blocks (a limiter's `block`): the end of each blocked key, per namespace.
import type { StoreDecision } from './store.js'

/** A namespace's blocks: user key (bounded) -> when its block ends (ms, the store's clock). */
export type BlockEnds = Map<string, number>

/** The blocks of every namespace, swept with the rest of the store's state. */
export class MemoryBlocks {
  readonly #spaces = new Map<string, BlockEnds>()

  /** The blocks of `namespace` (made on first use, and kept: limiters bind to it). */
  of(namespace: string): BlockEnds {
    let ends = this.#spaces.get(namespace)
    if (ends === undefined) {
      ends = new Map()
      this.#spaces.set(namespace, ends)
    }
    return ends
  }

  /** Blocks `key` until `endMs`, or keeps a block that ends later; returns the later end. */
  add(namespace: string, key: string, endMs: number): number {
    const ends = this.of(namespace)
    const held = ends.get(key)
    if (held !== undefined && held >= endMs) return held
    ends.set(key, endMs)
    return endMs
  }

  delete(namespace: string, key: string): void {
    this.#spaces.get(namespace)?.delete(key)
  }

  /** Drops the blocks that ended by `nowMs`; returns how many. */
  sweep(nowMs: number): number {
    let dropped = 0
    for (const ends of this.#spaces.values()) {
      for (const [key, endMs] of ends) {
        if (endMs <= nowMs) {
          ends.delete(key)
          dropped++
        }
      }
    }
    return dropped
  }

  clear(): void {
    for (const ends of this.#spaces.values()) ends.clear()
  }
}

/** The ms the block on `key` has left at `nowMs` (0: none). Cheap when nothing is blocked. */
export function blockLeft(ends: BlockEnds, key: string, nowMs: number): number {
  if (ends.size === 0) return 0
  const endMs = ends.get(key)
  return endMs === undefined || endMs <= nowMs ? 0 : endMs - nowMs
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
