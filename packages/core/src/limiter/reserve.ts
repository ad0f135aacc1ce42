// A fleet reserve's refusals, marked so the adapters can answer them 503 (not the client's fault).

import { type Decision, LimiterDecision } from '../decision/decision.js'
import type { PolicySet } from '../policies/limits.js'
import type { Decide } from './types.js'

/**
 * Whether `decision` (for `cost`) was refused only by concurrency policies' fleet reserves: each
 * refusing policy has a `reserve` and still had the slots for the request (`remaining`, the free
 * slots of the key, at least the cost), kept for higher priorities.
 */
export function refusedByReserve(set: PolicySet, decision: Decision, cost: number): boolean {
  if (decision.allowed || decision.source === 'fail-closed') return false
  const need = cost === 0 ? 1 : cost
  const { policies } = decision
  let refused = false
  for (let i = 0; i < policies.length; i++) {
    const d = policies[i] as Decision['policies'][number]
    if (d.allowed) continue
    if (set.policies[i]?.ceilings === undefined || d.remaining < need) return false
    refused = true
  }
  return refused
}

/**
 * `decide`, with the refusals its fleet reserves alone made marked `reason: 'reserve'`: itself
 * when no policy has a reserve (nothing to mark).
 */
export function withReserve(set: PolicySet, decide: Decide): Decide {
  if (!set.reserve) return decide
  const mark = (decision: Decision, cost: number): Decision =>
    decision instanceof LimiterDecision && refusedByReserve(set, decision, cost)
      ? LimiterDecision.because(decision, 'reserve')
      : decision
  return (key, cost, rank, waitMs) => {
    const decision = decide(key, cost, rank, waitMs)
    return decision instanceof Promise ? decision.then((d) => mark(d, cost)) : mark(decision, cost)
  }
}
