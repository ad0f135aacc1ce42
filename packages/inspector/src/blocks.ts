// Current blocks and penalties. Core lists none (a block is a key beside the state, found by
// name), so the inspector keeps its own bounded list: every `block` and refusing `penalize` of a
// registered limiter, from the `limiter:block` channel, at most MAX_BLOCKS per limiter. With
// Redis the lists are shared through one sorted set per limiter, scored by the end; before they
// are shown, each key is asked again by `peek`, so an unblocked or expired key drops out.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { BLOCK_CHANNEL, type BlockEvent, type Limiter } from '@limiter/core'
import type { Send } from './redis-sync.js'

/** The most blocks and penalties held (and shown) per limiter. */
export const MAX_BLOCKS = 100

export type BlockKind = 'block' | 'penalty'

/** One current block or penalty, as the page shows it. */
export interface BlockRow {
  readonly limiter: string
  /** The key, labelled by `maskKey`. */
  readonly key: string
  readonly kind: BlockKind
  /** When a request of the key passes again (ms since the epoch), as `peek` says now. */
  readonly untilMs: number
  /** `peek` could not say (the store failed): `untilMs` is the recorded end. */
  readonly unverified?: true | undefined
}

// A member of a list (and of the sorted set): the kind, a colon, the raw key.
const member = (kind: BlockKind, key: string) => `${kind}:${key}`
function parseMember(m: string): { kind: BlockKind; key: string } | undefined {
  const colon = m.indexOf(':')
  const kind = m.slice(0, colon)
  if (kind !== 'block' && kind !== 'penalty') return undefined
  return { kind, key: m.slice(colon + 1) }
}

/** Redis's sorted set of `limiter`'s blocks; `{name}` a hash tag. */
export function blocksKey(prefix: string, limiter: Limiter): string {
  return `${prefix}blocks:{${limiter.name.replaceAll(/[{}]/g, '_')}}`
}

/** The blocks and penalties of the registered limiters this process saw or read. */
export class BlockRegistry {
  // per limiter: member -> end (ms since the epoch); insertion order drops the oldest first
  readonly #lists = new Map<Limiter, Map<string, number>>()
  // what is not yet written to Redis
  readonly #pending = new Map<Limiter, Map<string, number>>()
  readonly #onChange: () => void

  /** `onChange`: called after each new block (to schedule a write to Redis). */
  constructor(limiters: readonly Limiter[], onChange: () => void = () => {}) {
    for (const limiter of limiters) {
      this.#lists.set(limiter, new Map())
      this.#pending.set(limiter, new Map())
    }
    this.#onChange = onChange
  }

  readonly #onBlock = (message: unknown): void => {
    const event = message as BlockEvent
    const list = this.#lists.get(event.limiter)
    // a penalty that leaves the key admitted is usage, not a penalty to list
    if (list === undefined || event.durationMs <= 0) return
    const m = member(event.kind, event.key)
    hold(list, m, event.untilMs)
    hold(this.#pending.get(event.limiter) as Map<string, number>, m, event.untilMs)
    this.#onChange()
  }

  start(): void {
    subscribe(BLOCK_CHANNEL, this.#onBlock)
  }

  stop(): void {
    unsubscribe(BLOCK_CHANNEL, this.#onBlock)
  }

  /** Writes what changed since the last write to Redis, trimming each sorted set. */
  async flush(send: Send, prefix: string, nowMs: number): Promise<void> {
    for (const [limiter, pending] of this.#pending) {
      if (pending.size === 0) continue
      const entries = [...pending]
      pending.clear()
      const key = blocksKey(prefix, limiter)
      const args = ['ZADD', key, 'GT']
      let lastMs = 0
      for (const [m, untilMs] of entries) {
        args.push(String(untilMs), m)
        lastMs = Math.max(lastMs, untilMs)
      }
      try {
        await send(key, args)
        await send(key, ['ZREMRANGEBYSCORE', key, '-inf', String(nowMs)])
        await send(key, ['ZREMRANGEBYRANK', key, '0', String(-MAX_BLOCKS - 1)])
        // the set lives as long as its last block: NX sets a first expiry, GT only lengthens it
        await send(key, ['PEXPIREAT', key, String(lastMs), 'NX'])
        await send(key, ['PEXPIREAT', key, String(lastMs), 'GT'])
      } catch (error) {
        for (const [m, untilMs] of entries) hold(pending, m, untilMs) // try again next time
        throw error
      }
    }
  }

  /** Reads every process's blocks of each limiter from Redis into this process's lists. */
  async read(send: Send, prefix: string, nowMs: number): Promise<void> {
    for (const [limiter, list] of this.#lists) {
      const key = blocksKey(prefix, limiter)
      const reply = await send(key, [
        'ZRANGE',
        key,
        '+inf',
        `(${nowMs}`,
        'BYSCORE',
        'REV',
        'LIMIT',
        '0',
        String(MAX_BLOCKS),
        'WITHSCORES',
      ])
      for (const [m, untilMs] of pairsOf(reply)) hold(list, m, untilMs)
    }
  }

  /** The raw keys listed (to find the key behind a label). */
  keys(): string[] {
    const out: string[] = []
    for (const list of this.#lists.values())
      for (const m of list.keys()) out.push(parseMember(m)?.key ?? m)
    return out
  }

  /**
   * The current blocks and penalties, latest end first: each key asked again by `peek` (an
   * admitted key, unblocked or expired, is dropped from the list).
   */
  async current(nowMs: number, label: (key: string) => string): Promise<BlockRow[]> {
    const rows: BlockRow[] = []
    for (const [limiter, list] of this.#lists) {
      // asked together: a RedisStore sends the peeks in one batch
      const asked = [...list].map(async ([m, endMs]) => {
        const parsed = parseMember(m)
        const row =
          parsed === undefined || endMs <= nowMs
            ? undefined
            : await verified(limiter, parsed.key, endMs, nowMs)
        if (row === undefined || parsed === undefined) list.delete(m)
        else rows.push({ limiter: limiter.name, key: label(parsed.key), kind: parsed.kind, ...row })
      })
      await Promise.all(asked)
    }
    return rows.sort((a, b) => b.untilMs - a.untilMs)
  }
}

// Keeps the later end of `m`, dropping the oldest entry past MAX_BLOCKS.
function hold(list: Map<string, number>, m: string, untilMs: number): void {
  const held = list.get(m)
  if (held !== undefined && held >= untilMs) return
  list.delete(m) // re-inserted: the newest last
  list.set(m, untilMs)
  if (list.size > MAX_BLOCKS) list.delete(list.keys().next().value as string)
}

async function verified(
  limiter: Limiter,
  key: string,
  endMs: number,
  nowMs: number,
): Promise<{ untilMs: number; unverified?: true } | undefined> {
  try {
    const decision = await limiter.peek(key)
    // the store failed and `failureMode` answered: not a word on the block
    if (decision.source !== 'store' && decision.source !== 'blocked-cache')
      return { untilMs: endMs, unverified: true }
    return decision.allowed ? undefined : { untilMs: nowMs + decision.retryAfterMs }
  } catch {
    return { untilMs: endMs, unverified: true }
  }
}

// ZRANGE ... WITHSCORES answers [member, score, ...] (ioredis, node-redis 4 sendCommand) or,
// on RESP3, [[member, score], ...].
function pairsOf(reply: unknown): Array<[string, number]> {
  if (!Array.isArray(reply)) return []
  const out: Array<[string, number]> = []
  for (let i = 0; i < reply.length; i++) {
    const item: unknown = reply[i]
    if (Array.isArray(item)) out.push([String(item[0]), Number(item[1])])
    else out.push([String(item), Number(reply[++i])])
  }
  return out
}
