// Several policies decided together, all or nothing: the twin of lua/lib/limits.lua's (and
// lua/lib/packed-limits.lua's) decisions, apart from where the states live.
import { TWINS } from '../algorithms/index.js'
import type { Outcome } from '../algorithms/outcome.js'
import type { PolicySet } from '../policies/limits.js'
import type { Policy } from '../policies/policy.js'
import { consumeTicket } from './leases.js'
import { blockedDecision } from './memory-blocks.js'
import type { StoreDecision } from './store.js'

/** What {@link decideSet} returns: each policy's decision, and its outcome (the state to write). */
export interface SetDecision {
  readonly decisions: StoreDecision[]
  /** `outcomes[i].state`: policy i's new state, undefined when it writes nothing. */
  readonly outcomes: Outcome<unknown>[]
}

/**
 * Decides `given` under every policy from `states` (each policy's live state, undefined when
 * empty) at `now`: each check writes nothing; if every policy admits, each counts it (policies
 * that reserve a later slot all reserve at the longest of their waits); if any refuses, none
 * does, and a policy that would have admitted reports what it holds now (a peek). A key blocked
 * for `leftMs` more counts nothing: every policy peeks, and refuses until the block ends.
 */
export function decideSet(
  policies: PolicySet['policies'],
  states: readonly unknown[],
  given: number,
  now: number,
  leftMs: number,
  rank: number | undefined,
  waitMs: number | undefined,
): SetDecision {
  const cost = leftMs > 0 ? 0 : given
  const n = policies.length
  const first: Outcome<unknown>[] = new Array(n)
  let all = true
  let holdMs = 0
  for (let i = 0; i < n; i++) {
    const policy = policies[i] as Policy
    const outcome = TWINS[policy.algorithm].check(
      states[i],
      now,
      policy,
      cost,
      undefined,
      leftMs > 0 ? undefined : leaseFor(policy, cost, rank, waitMs),
    )
    first[i] = outcome
    if (!outcome.allowed) all = false
    else if ((outcome.delayMs ?? 0) > holdMs) holdMs = outcome.delayMs as number
  }
  const outcomes = first.map((outcome, i) => {
    const policy = policies[i] as Policy
    const twin = TWINS[policy.algorithm]
    if (!all && outcome.allowed) return twin.check(states[i], now, policy, 0)
    if (all && cost > 0 && outcome.delayMs !== undefined && outcome.delayMs < holdMs)
      return twin.check(states[i], now, policy, cost, undefined, undefined, holdMs)
    return outcome
  })
  const decisions = outcomes.map((o, i): StoreDecision => {
    if (leftMs > 0) return blockedDecision(o, leftMs)
    if (o === first[i] || all) return o
    return { allowed: true, remaining: o.remaining, resetMs: o.resetMs, retryAfterMs: 0 }
  })
  return { decisions, outcomes }
}

/**
 * A consume's ticket for the twin: a concurrency policy's new lease (behind its class's ceiling
 * under a fleet reserve), a waiting gcra policy's wait cap (see consumeTicket); none for a peek of
 * another algorithm or nothing to send.
 */
export function leaseFor(
  policy: Policy,
  cost: number,
  rank: number | undefined,
  waitMs?: number,
): string | undefined {
  const ticket = consumeTicket(policy, cost, rank, waitMs)
  return ticket === '' ? undefined : ticket
}
