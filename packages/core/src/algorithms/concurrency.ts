// concurrency: the leases a key holds, each until released or until `window` after it was taken.
import type { AlgorithmTwin, Outcome, RefundOutcome } from './outcome.js'

/**
 * State: each lease's slots, by member name, with when they expire (ms). A lease of cost `c`
 * holds `c` members: its id, then `<id>#2` to `<id>#c` (the Redis script's sorted set holds the
 * same members, scored by the same expiry).
 */
export interface ConcurrencyState {
  readonly slots: Map<string, number>
}

/**
 * A ticket's fleet-reserve ceiling and lease: `<ceiling>/<cost>:<id>` (or `<ceiling>/` for a
 * peek) carries the most slots in use that still admit the request's class; a plain lease
 * carries none (`limit`). As lua/concurrency.lua reads it.
 */
export function splitLease(
  ticket: string | undefined,
  limit: number,
): [number, string | undefined] {
  if (ticket === undefined) return [limit, undefined]
  const slash = ticket.indexOf('/')
  if (slash < 1) return [limit, ticket]
  const rest = ticket.slice(slash + 1)
  return [Math.min(limit, Number(ticket.slice(0, slash))), rest === '' ? undefined : rest]
}

/** A lease's members: `id`, then `id#2` to `id#cost` (a `<ceiling>/` prefix is skipped). */
export function leaseMembers(ticket: string): string[] {
  const lease = ticket.slice(ticket.indexOf('/') + 1)
  const colon = lease.indexOf(':')
  const cost = Number(lease.slice(0, colon))
  const id = lease.slice(colon + 1)
  const members = [id]
  for (let i = 2; i <= cost; i++) members.push(`${id}#${i}`)
  return members
}

// The live slots (expiry after now), in place when the caller gave the state up for reuse.
function live(
  state: ConcurrencyState | undefined,
  nowMs: number,
  inPlace: boolean,
): Map<string, number> {
  if (state === undefined) return new Map()
  const slots = inPlace ? state.slots : new Map(state.slots)
  for (const [member, expiresMs] of slots) if (expiresMs <= nowMs) slots.delete(member)
  return slots
}

// The latest expiry among `slots` (its state's TTL), or `nowMs` when none is held.
function latest(slots: Map<string, number>, nowMs: number): number {
  let most = nowMs
  for (const expiresMs of slots.values()) if (expiresMs > most) most = expiresMs
  return most
}

// Whether a consume's lease is held already: the same call run twice (a client that re-sent it
// after losing the reply; only a remote store meets it). Admitted on its own slots, as
// lua/concurrency.lua does, when they are within its ceiling.
function heldAlready(
  slots: Map<string, number>,
  lease: string | undefined,
  admitting: boolean,
  need: number,
  ceiling: number,
): boolean {
  if (!admitting || lease === undefined || slots.size < need || slots.size > ceiling) return false
  return slots.has(leaseMembers(lease)[0] as string)
}

/**
 * Concurrency: a request of cost `c` is admitted when the slots held (leases not released and
 * not expired) plus `c` are at most `limit` (at most the ceiling its lease carries, with a fleet
 * reserve: {@link splitLease}); it then holds a lease of `c` slots until it is
 * released or `window` has passed. `remaining` is the free slots; `resetMs` the time until the
 * last lease held expires. A refusal's `retryAfterMs` is the policy's estimate (`retryAfterMs`),
 * never later than the time enough leases expire on their own.
 */
export const concurrency: AlgorithmTwin<ConcurrencyState> = {
  check(state, nowMs, policy, cost, reuse, ticket): Outcome<ConcurrencyState> {
    const { limit, windowMs } = policy
    const [ceiling, lease] = splitLease(ticket, limit)
    const peek = cost === 0
    const need = peek ? 1 : cost
    const admitting = !peek && lease !== undefined
    const slots = live(state, nowMs, reuse !== undefined && reuse === state)
    const held = slots.size
    const allowed = held + need <= ceiling || heldAlready(slots, lease, admitting, need, ceiling)
    let retryAfterMs = 0
    if (!allowed) {
      // the slot that must expire for `need` to fit: the (held + need - ceiling)-th earliest
      const expiries = [...slots.values()].sort((a, b) => a - b)
      // (none when the class's ceiling is below `need`: expiries alone never make room)
      const freedAt = expiries[held + need - ceiling - 1]
      const estimate = policy.retryAfterMs ?? 0
      retryAfterMs =
        freedAt === undefined
          ? estimate
          : Math.min(policy.retryAfterMs ?? freedAt - nowMs, freedAt - nowMs)
    }
    let next: ConcurrencyState | undefined
    if (allowed && lease !== undefined && admitting) {
      for (const member of leaseMembers(lease)) slots.set(member, nowMs + windowMs)
      next = reuse !== undefined && reuse === state ? state : { slots }
    }
    const after = slots.size
    const endMs = latest(slots, nowMs)
    return {
      allowed,
      remaining: Math.max(0, limit - after),
      resetMs: after === 0 ? 0 : endMs - nowMs,
      retryAfterMs,
      state: next,
      ttlMs: endMs - nowMs,
      ticket: allowed && admitting ? ticket : undefined,
    }
  },
  refund(state, nowMs, _policy, _cost, ticket): RefundOutcome<ConcurrencyState> {
    const slots = live(state, nowMs, false)
    if (ticket !== undefined) for (const member of leaseMembers(ticket)) slots.delete(member)
    if (slots.size === 0) return { state: null, ttlMs: 0 }
    return { state: { slots }, ttlMs: latest(slots, nowMs) - nowMs }
  },
}
