// How a limiter turns its store's answer (or a failure, or a cached refusal) into the Decision a
// caller gets: one shape, built in one place.
import {
  type Decision,
  type DecisionOwner,
  type DecisionSource,
  LimiterDecision,
  type PolicyDecision,
  type Ticket,
} from './decision.js'
import type { LimiterError } from './errors.js'
import { combineDecisions, type NamedPolicy, type PolicySet } from './limits.js'
import type { StoreDecision } from './stores/store.js'

/** The decisions of one limiter. */
export interface Decisions {
  readonly owner: DecisionOwner
  /** A one-policy answer given as plain values (the store's fast path). */
  one(
    allowed: boolean,
    remaining: number,
    resetMs: number,
    retryAfterMs: number,
    ticket: string | undefined,
    source: DecisionSource,
  ): Decision
  /** A store's answer: one decision, or one per policy for a limiter with several. */
  of(value: StoreDecision | readonly StoreDecision[], source: DecisionSource): Decision
  /** The answer of `failureMode` `'open'` or `'closed'`, carrying the failure behind it. */
  failed(mode: 'open' | 'closed', error: LimiterError): Decision
  /** A refusal the blocked-key cache remembers, counted down by the `elapsedMs` since. */
  blocked(decision: Decision, elapsedMs: number): Decision
}

/** Builds the decisions of a limiter holding `set`. */
export function decisionsFor(set: PolicySet): Decisions {
  const { policies } = set
  const owner: DecisionOwner = Object.freeze({ names: policies.map((p) => p.name) })
  const first = policies[0] as NamedPolicy
  const several = policies.length > 1

  const one: Decisions['one'] = (allowed, remaining, resetMs, retryAfterMs, ticket, source) =>
    new LimiterDecision(
      owner,
      allowed,
      first.limit,
      remaining,
      resetMs,
      retryAfterMs,
      ticket,
      source,
    )

  // One entry per policy, and the limiter's own fields from them.
  const fromEntries = (
    entries: readonly PolicyDecision[],
    ticket: Ticket,
    source: DecisionSource,
  ): LimiterDecision => {
    const top = combineDecisions(set, entries)
    return new LimiterDecision(
      owner,
      top.allowed,
      top.limit,
      top.remaining,
      top.resetMs,
      top.retryAfterMs,
      ticket,
      source,
      entries,
    )
  }

  const of: Decisions['of'] = (value, source) => {
    if (!several) {
      const d = value as StoreDecision
      return one(d.allowed, d.remaining, d.resetMs, d.retryAfterMs, d.ticket, source)
    }
    // one plain loop: this runs for every decision of a limiter with several policies
    const outcomes = value as readonly StoreDecision[]
    const n = outcomes.length
    const entries: PolicyDecision[] = new Array(n)
    let tickets: Array<string | undefined> | undefined
    for (let i = 0; i < n; i++) {
      const o = outcomes[i] as StoreDecision
      entries[i] = entry(policies[i] as NamedPolicy, o)
      if (o.ticket !== undefined) {
        tickets ??= new Array(n).fill(undefined)
        tickets[i] = o.ticket
      }
    }
    return fromEntries(entries, tickets, source)
  }

  return {
    owner,
    one,
    of,
    failed(mode, error) {
      const open = mode === 'open'
      const entries = policies.map((p) =>
        entry(p, {
          allowed: open,
          remaining: open ? p.limit : 0,
          resetMs: open ? 0 : 1000,
          retryAfterMs: open ? 0 : 1000,
        }),
      )
      const decision = several
        ? fromEntries(entries, undefined, open ? 'fail-open' : 'fail-closed')
        : (one(
            open,
            open ? first.limit : 0,
            open ? 0 : 1000,
            open ? 0 : 1000,
            undefined,
            open ? 'fail-open' : 'fail-closed',
          ) as LimiterDecision)
      return LimiterDecision.failed(decision, error)
    },
    blocked(decision, elapsedMs) {
      const down = (ms: number): number => Math.max(0, Math.ceil(ms - elapsedMs))
      if (!several)
        return one(
          false,
          0,
          down(decision.resetMs),
          down(decision.retryAfterMs),
          undefined,
          'blocked-cache',
        )
      const entries = decision.policies.map((p) => ({
        ...p,
        resetMs: down(p.resetMs),
        retryAfterMs: down(p.retryAfterMs),
      }))
      return fromEntries(entries, undefined, 'blocked-cache')
    },
  }
}

function entry(policy: NamedPolicy, o: StoreDecision): PolicyDecision {
  return {
    name: policy.name,
    allowed: o.allowed,
    limit: policy.limit,
    remaining: o.remaining,
    resetMs: o.resetMs,
    retryAfterMs: o.retryAfterMs,
  }
}
