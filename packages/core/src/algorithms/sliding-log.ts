// sliding-log: one record per millisecond with admissions; exact over any window-long interval.
import type { AlgorithmTwin, Outcome, RefundOutcome, Writable } from './outcome.js'

/** The cost admitted in one millisecond. */
export interface LogEntry {
  readonly atMs: number
  readonly cost: number
}

/**
 * State: one entry per admission time, oldest first (each time once), and the total cost of the
 * entries from `head` on. Entries before `head` (default 0) have left the window: a log updated
 * in place skips them instead of copying the rest, and drops them once they are as many as the
 * entries still held.
 */
export interface SlidingLogState {
  readonly entries: readonly LogEntry[]
  readonly sum: number
  readonly head?: number
}

// Where the entries still in the window start (their time is after `cutoffMs`), and their total cost.
function skipExpired(state: SlidingLogState, cutoffMs: number): [number, number] {
  const { entries } = state
  let head = state.head ?? 0
  let sum = state.sum
  while (head < entries.length && (entries[head] as LogEntry).atMs <= cutoffMs) {
    sum -= (entries[head] as LogEntry).cost
    head++
  }
  return [head, sum]
}

// The entries still in the window, as a new array, and their total cost.
function active(state: SlidingLogState | undefined, cutoffMs: number): [LogEntry[], number] {
  if (state === undefined) return [[], 0]
  const [head, sum] = skipExpired(state, cutoffMs)
  return [state.entries.slice(head), sum]
}

/** An admission's refund ticket, "<time>:<cost>" (the Lua script reads the same form). */
export function logTicket(atMs: number, cost: number): string {
  return `${atMs}:${cost}`
}

function parseTicket(ticket: string): LogEntry | undefined {
  const match = /^(\d+):(\d+)$/.exec(ticket)
  return match === null ? undefined : { atMs: Number(match[1]), cost: Number(match[2]) }
}

// How long until the entries leaving the window (oldest first) free `excess`; 0 if they never do.
function untilFreed(
  entries: readonly LogEntry[],
  head: number,
  excess: number,
  windowMs: number,
  nowMs: number,
): number {
  let freed = 0
  for (let i = head; i < entries.length; i++) {
    const e = entries[i] as LogEntry
    freed += e.cost
    if (freed >= excess) return e.atMs + windowMs - nowMs
  }
  return 0
}

/**
 * Sliding log: a request of cost `c` at time `t` is admitted when the cost admitted in
 * `(t - window, t]` plus `c` is at most `limit`. Rejected requests are not recorded. An admission
 * is recorded at max(now, newest entry), so a clock stepping back never admits more.
 */
export const slidingLog: AlgorithmTwin<SlidingLogState> = {
  check(state, nowMs, policy, cost, reuse): Outcome<SlidingLogState> {
    const { limit, windowMs } = policy
    const peek = cost === 0
    const need = peek ? 1 : cost
    const all = state === undefined ? [] : state.entries
    let [head, sum] = state === undefined ? [0, 0] : skipExpired(state, nowMs - windowMs)
    const allowed = sum + need <= limit
    const retryAfterMs = allowed ? 0 : untilFreed(all, head, sum + need - limit, windowMs, nowMs)
    const newest = head < all.length ? all[all.length - 1] : undefined
    let newestMs = newest === undefined ? nowMs : newest.atMs
    let next: SlidingLogState | undefined
    let ticket: string | undefined
    if (allowed && !peek) {
      // Given the state itself to reuse, the log grows in place (dropping what left the window
      // once that is half of it); otherwise the entries still held are copied.
      const inPlace = reuse !== undefined && reuse === state
      let entries: LogEntry[]
      if (inPlace) {
        entries = all as LogEntry[]
        if (head >= entries.length - head) {
          entries.splice(0, head)
          head = 0
        }
      } else {
        entries = all.slice(head)
        head = 0
      }
      if (newest !== undefined && newest.atMs >= nowMs) {
        // this millisecond (or later, after the clock stepped back) already has an entry
        entries[entries.length - 1] = { atMs: newest.atMs, cost: newest.cost + need }
      } else {
        newestMs = nowMs
        entries.push({ atMs: nowMs, cost: need })
      }
      sum += need
      ticket = logTicket(newestMs, need)
      if (inPlace) {
        const s = reuse as Writable<SlidingLogState>
        s.sum = sum
        s.head = head
        next = s
      } else next = { entries, sum }
    }
    return {
      allowed,
      remaining: Math.max(0, limit - sum),
      resetMs: sum === 0 ? 0 : newestMs + windowMs - nowMs,
      retryAfterMs,
      state: next,
      ttlMs: newestMs + windowMs - nowMs,
      ticket,
    }
  },
  refund(state, nowMs, policy, cost, ticket): RefundOutcome<SlidingLogState> {
    const { windowMs } = policy
    const [entries, held] = active(state, nowMs - windowMs)
    let sum = held
    if (ticket !== undefined) {
      // at most the admission's cost, from the entry of its time (gone once out of the window)
      const admitted = parseTicket(ticket)
      for (let i = entries.length - 1; admitted !== undefined && i >= 0; i--) {
        const e = entries[i] as LogEntry
        if (e.atMs < admitted.atMs) break
        if (e.atMs === admitted.atMs) {
          const take = Math.min(admitted.cost, e.cost)
          entries[i] = { atMs: e.atMs, cost: e.cost - take }
          sum -= take
          break
        }
      }
    } else {
      let left = cost
      for (let i = entries.length - 1; left > 0 && i >= 0; i--) {
        const e = entries[i] as LogEntry
        const take = Math.min(left, e.cost)
        entries[i] = { atMs: e.atMs, cost: e.cost - take }
        sum -= take
        left -= take
      }
    }
    const kept = entries.filter((e) => e.cost > 0)
    const newest = kept[kept.length - 1]
    if (sum <= 0 || newest === undefined) return { state: null, ttlMs: 0 }
    return { state: { entries: kept, sum }, ttlMs: newest.atMs + windowMs - nowMs }
  },
  penalize(state, nowMs, policy, cost): RefundOutcome<SlidingLogState> {
    // recorded as an admission would be, past the limit; the total stays within the 4 bytes the
    // Redis layout gives it
    const { windowMs } = policy
    const [entries, held] = active(state, nowMs - windowMs)
    const c = Math.min(cost, MAX_SUM - held)
    if (c <= 0) return keep(entries, held, windowMs, nowMs)
    const newest = entries[entries.length - 1]
    if (newest !== undefined && newest.atMs >= nowMs)
      entries[entries.length - 1] = { atMs: newest.atMs, cost: newest.cost + c }
    else entries.push({ atMs: nowMs, cost: c })
    return keep(entries, held + c, windowMs, nowMs)
  },
}

// The most cost a log holds in all (its Redis trailer keeps the total in 4 bytes).
const MAX_SUM = 4294967295

function keep(
  entries: LogEntry[],
  sum: number,
  windowMs: number,
  nowMs: number,
): RefundOutcome<SlidingLogState> {
  const newest = entries[entries.length - 1] as LogEntry
  return { state: { entries, sum }, ttlMs: newest.atMs + windowMs - nowMs }
}
