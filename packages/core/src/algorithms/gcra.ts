// gcra: one theoretical arrival time (TAT) per key.
import type { Policy } from '../policies/policy.js'
import {
  type AlgorithmTwin,
  ceilDiv,
  floorDiv,
  type Outcome,
  type RefundOutcome,
  type Writable,
} from './outcome.js'

/**
 * The TAT as an exact rational: `ms + frac / den` milliseconds, with `0 <= frac < den`.
 * `den` is the policy's `limit` when written, so the emission interval `window / limit` adds
 * exactly `window` to `frac`.
 */
export interface GcraState {
  readonly ms: number
  readonly frac: number
  readonly den: number
}

/**
 * How far the TAT is ahead of now, in units of 1/`limit` ms (0 when it is not ahead), with the
 * TAT in the current denominator (`limit`).
 */
export function aheadOf(state: GcraState | undefined, nowMs: number, limit: number): number {
  if (state === undefined || state.ms < nowMs) return 0
  let { ms, frac } = state
  if (state.den !== limit) {
    // A changed limit re-expresses the fraction, rounding the TAT later (never admits extra).
    frac = Math.ceil((frac * limit) / state.den)
    if (frac >= limit) {
      ms += 1
      frac -= limit
    }
  }
  return (ms - nowMs) * limit + frac
}

/** The state for a TAT `ahead` units after now, written into `reuse` when given. */
export function stateAt(nowMs: number, ahead: number, limit: number, reuse?: GcraState): GcraState {
  const whole = floorDiv(ahead, limit)
  // ahead % limit without a floating-point remainder (V8 calls out for one), exact wherever
  // floorDiv is
  const frac = ahead - whole * limit
  const ms = nowMs + whole
  if (reuse === undefined) return { ms, frac, den: limit }
  const s = reuse as Writable<GcraState>
  s.ms = ms
  s.frac = frac
  s.den = limit
  return s
}

/**
 * GCRA: emission interval `T = window / limit`, burst tolerance `burst x T`. A request of cost
 * `c` moves the TAT to `max(TAT, now) + c x T` and is admitted when that is at most
 * `now + burst x T`. Decisions equal a token bucket's with the same numbers.
 */
export const gcra: AlgorithmTwin<GcraState> = {
  check(state, nowMs, policy, cost, reuse, ticket, holdMs): Outcome<GcraState> {
    const { limit, windowMs: w, burst } = policy
    const tolerance = burst * w
    const peek = cost === 0
    const before = aheadOf(state, nowMs, limit)
    const ahead = before + (peek ? 1 : cost) * w
    if (policy.waitUnits !== undefined)
      return reserve(policy, nowMs, before, ahead, peek, reuse, holdMs, ticket)
    const allowed = ahead <= tolerance
    const used = allowed && !peek ? ahead : before
    return {
      allowed,
      remaining: Math.max(0, floorDiv(tolerance - used, w)),
      resetMs: ceilDiv(used, limit),
      retryAfterMs: allowed ? 0 : ceilDiv(ahead - tolerance, limit),
      state: allowed && !peek ? stateAt(nowMs, ahead, limit, reuse) : undefined,
      ttlMs: ceilDiv(ahead, limit),
    }
  },
  refund(state, nowMs, policy, cost, ticket): RefundOutcome<GcraState> {
    const { limit } = policy
    const before = aheadOf(state, nowMs, limit)
    if (state === undefined || before <= 0) return { state: null, ttlMs: 0 }
    const back = refundable(policy, nowMs, before, cost, ticket)
    // nothing given back: the state stays exactly as it is (its denominator too)
    if (back === 0) return { state, ttlMs: state.ms - nowMs + (state.frac > 0 ? 1 : 0) }
    const ahead = before - back
    if (ahead <= 0) return { state: null, ttlMs: 0 }
    return { state: stateAt(nowMs, ahead, limit), ttlMs: ceilDiv(ahead, limit) }
  },
  penalize(state, nowMs, policy, cost): RefundOutcome<GcraState> {
    const { limit, windowMs: w, burst } = policy
    // max(TAT, now) + cost x T without the burst check, but never more than one window past a
    // full bucket (nor earlier than the TAT already is)
    const before = aheadOf(state, nowMs, limit)
    const most = burst * w + limit * w
    let ahead = before + cost * w
    if (ahead > most) ahead = Math.max(before, most)
    return { state: stateAt(nowMs, ahead, limit), ttlMs: ceilDiv(ahead, limit) }
  },
}

/**
 * GCRA under a limiter's `maxDelay` or `delayAfter`: the first `delayAfter` of a burst pass at
 * once; a request beyond them that can pass within the wait allowance reserves its slot (the
 * TAT advances as if it were admitted when its wait ends, `max(TAT, now + wait) + c x T`, the
 * wait exact, not rounded: rounding each reservation up to a whole ms would lose up to 1 ms of
 * rate per request) and is admitted with `delayMs` (the wait rounded up) and a ticket naming
 * the TAT it left (see `refund`); beyond the allowance it is refused, its `retryAfterMs` the
 * time until it would pass without waiting. `holdMs`: the common wait of several policies
 * decided together, at least this policy's own. `cap`: a consume's own wait cap in whole ms
 * (see `waitTicket`), which narrows the allowance for this request alone; `''` or absent: none.
 */
function reserve(
  policy: Policy,
  nowMs: number,
  before: number,
  ahead: number,
  peek: boolean,
  reuse: GcraState | undefined,
  holdMs: number | undefined,
  cap: string | undefined,
): Outcome<GcraState> {
  const { limit, windowMs: w, burst } = policy
  const atOnce = (policy.delayAfter as number) * w
  const late = ahead - atOnce
  const allowed = late <= allowanceOf(policy, cap)
  const delayMs = late > 0 ? ceilDiv(late, limit) : 0
  const wait = holdMs === undefined || holdMs <= delayMs ? delayMs : holdMs
  // admitted when its wait ends: exactly `late` units from now (its own wait, rounded up to
  // whole ms only in `delayMs`), or at the longer common `hold`
  const at = wait === delayMs ? late : wait * limit
  const admitted = allowed && !peek
  const used = admitted ? Math.max(before, at) + (ahead - before) : before
  // a reservation's ticket, for a refund that knows whether it is still the tail
  const ticket =
    admitted && wait > 0
      ? reservationTicket(
          limit,
          nowMs + floorDiv(used, limit),
          used % limit,
          used - before,
          (ahead - before) / w,
        )
      : undefined
  return {
    allowed,
    remaining: Math.max(0, floorDiv(burst * w - used, w)),
    resetMs: ceilDiv(used, limit),
    retryAfterMs: allowed ? 0 : delayMs,
    state: admitted ? stateAt(nowMs, used, limit, reuse) : undefined,
    ttlMs: ceilDiv(admitted ? used : ahead, limit),
    delayMs: allowed ? wait : 0,
    ticket,
  }
}

// How far past what passes at once a request may be, in units: the policy's allowance, or a
// consume's own cap (whole ms, its ticket) when that is less.
function allowanceOf(policy: Policy, ticket: string | undefined): number {
  const most = policy.waitUnits as number
  if (ticket === undefined || ticket === '') return most
  const cap = Number(ticket) * policy.limit
  return Math.min(cap, most)
}

/**
 * A reservation's refund ticket: the policy's `limit`, the TAT the reservation left (whole ms,
 * then the fraction in units of 1/`limit` ms), how far it moved the TAT, in those units, and its
 * cost (the Lua script reads the same form).
 */
export function reservationTicket(
  limit: number,
  ms: number,
  frac: number,
  moved: number,
  cost: number,
): string {
  return `${limit}:${ms}:${frac}:${moved}:${cost}`
}

/**
 * What a refund of `cost` gives back, in units, the TAT `ahead` units from now. With a
 * reservation's ticket: only while it is still the tail of the queue (the TAT is the one it
 * left: nobody reserved after it); refunding its whole cost, all it moved the TAT (its own cost
 * and the gap its wait left before it: a longer wait of another policy decided with it, or a
 * cost above `delayAfter`), so the queue ends where it did before it; a part of its cost, that
 * part (the rest still goes ahead when its wait ends). Any other reservation's slot stays
 * spent, since moving the TAT back would give the next request a slot a waiter holds. Without
 * one (an admission that did not wait): `cost x T`, unless someone waits (a waiting policy's TAT
 * past what passes at once), for the same reason. (lua/gcra.lua's `refundable`.)
 */
function refundable(
  policy: Policy,
  nowMs: number,
  ahead: number,
  cost: number,
  ticket: string | undefined,
): number {
  const { limit, windowMs: w } = policy
  const units = cost * w
  if (ticket !== undefined && ticket !== '') {
    const match = /^(\d+):(\d+):(\d+):(\d+):(\d+)$/.exec(ticket)
    if (match === null || Number(match[1]) !== limit) return 0
    // the TAT in the current denominator, as the Lua script reads it
    const tatMs = nowMs + floorDiv(ahead, limit)
    if (Number(match[2]) !== tatMs || Number(match[3]) !== ahead % limit) return 0
    const moved = Number(match[4])
    return cost >= Number(match[5]) ? moved : Math.min(units, moved)
  }
  if (policy.waitUnits !== undefined && ahead > (policy.delayAfter as number) * w) return 0
  return units
}
