// sliding-log: one sorted-set member per admitted request; exact over any window-long interval.
import type { AlgorithmTwin, Outcome, RefundOutcome } from './outcome.js'

/** One admitted request: when, its cost, and its member id (unique per key). */
export interface LogEntry {
  readonly atMs: number
  readonly cost: number
  readonly id: string
}

/** State: admitted requests oldest first, their total cost, and the id sequence. */
export interface SlidingLogState {
  readonly entries: readonly LogEntry[]
  readonly sum: number
  readonly seq: number
}

function memberId(seq: number, cost: number): string {
  return cost === 1 ? String(seq) : `${seq}:${cost}`
}

function active(state: SlidingLogState | undefined, cutoffMs: number): LogEntry[] {
  if (state === undefined) return []
  return state.entries.filter((e) => e.atMs > cutoffMs)
}

function total(entries: readonly LogEntry[]): number {
  let sum = 0
  for (const e of entries) sum += e.cost
  return sum
}

// Redis orders members of equal score by their bytes; refunds walk newest first in that order.
function newestFirst(a: LogEntry, b: LogEntry): number {
  if (a.atMs !== b.atMs) return b.atMs - a.atMs
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0
}

/**
 * Sliding log: a request of cost `c` at time `t` is admitted when the cost admitted in
 * `(t - window, t]` plus `c` is at most `limit`. Rejected requests are not recorded.
 */
export const slidingLog: AlgorithmTwin<SlidingLogState> = {
  check(state, nowMs, policy, cost): Outcome<SlidingLogState> {
    const { limit, windowMs } = policy
    const peek = cost === 0
    const need = peek ? 1 : cost
    const entries = active(state, nowMs - windowMs)
    let sum = total(entries)
    const allowed = sum + need <= limit
    let retryAfterMs = 0
    if (!allowed) {
      const excess = sum + need - limit
      let freed = 0
      for (const e of entries) {
        freed += e.cost
        if (freed >= excess) {
          retryAfterMs = e.atMs + windowMs - nowMs
          break
        }
      }
    }
    let next: SlidingLogState | undefined
    let ticket: string | undefined
    let newestMs = entries.length > 0 ? (entries[entries.length - 1] as LogEntry).atMs : nowMs
    if (allowed && !peek) {
      // ids restart only when the log is empty, as in the Lua script
      const seq = (entries.length === 0 ? 0 : (state?.seq ?? 0)) + 1
      ticket = memberId(seq, need)
      entries.push({ atMs: nowMs, cost: need, id: ticket })
      sum += need
      newestMs = nowMs
      next = { entries, sum, seq }
    }
    return {
      allowed,
      remaining: Math.max(0, limit - sum),
      resetMs: sum === 0 ? 0 : newestMs + windowMs - nowMs,
      retryAfterMs,
      state: next,
      ttlMs: windowMs,
      ticket,
    }
  },
  refund(state, nowMs, policy, cost, ticket): RefundOutcome<SlidingLogState> {
    const { windowMs } = policy
    const entries = active(state, nowMs - windowMs)
    if (state === undefined || entries.length === 0) return { state: null, ttlMs: 0 }
    const remove = new Set<string>()
    if (ticket !== undefined) {
      if (entries.some((e) => e.id === ticket)) remove.add(ticket)
    } else {
      let left = cost
      for (const e of [...entries].sort(newestFirst)) {
        if (left === 0) break
        if (e.cost <= left) {
          remove.add(e.id)
          left -= e.cost
        }
      }
    }
    const kept = entries.filter((e) => !remove.has(e.id))
    if (kept.length === 0) return { state: null, ttlMs: 0 }
    const newestMs = (kept[kept.length - 1] as LogEntry).atMs
    return {
      state: { entries: kept, sum: total(kept), seq: state.seq },
      ttlMs: newestMs + windowMs - nowMs,
    }
  },
}
