// How a limiter turns its store's answer (or a failure, or a cached refusal) into the Decision a
// caller gets: one shape, built in one place.

import type { LimiterError } from '../common/errors.js'
import {
  type Decision,
  type DecisionOwner,
  type DecisionSource,
  LimiterDecision,
  type PolicyDecision,
  type Ticket,
} from '../decision/decision.js'
import { combineDecisions, type PolicySet } from '../policies/limits.js'
import type { NamedPolicy } from '../policies/policy.js'
import type { StoreCall, StoreDecision } from '../stores/store.js'
import type { Handlers } from './guard.js'

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
    delayMs?: number,
  ): Decision
  /**
   * A one-policy store answer read at once (MemoryStore's bound consume, whose answer object the
   * next call reuses): the same Decision as `of(d, 'store')`, built without the steps between.
   * A refusal equal to the one before is that one again (frozen).
   */
  fromStore(d: StoreDecision): Decision
  /**
   * `fromStore` of a cost-1 answer given as its numbers (no ticket, no wait): MemoryStore's
   * common consume builds the decision with it, in the same step.
   */
  answer(allowed: boolean, remaining: number, resetMs: number, retryAfterMs: number): Decision
  /** A store's answer: one decision, or one per policy for a limiter with several. */
  of(value: StoreDecision | readonly StoreDecision[], source: DecisionSource): Decision
  /** The answer of `failureMode` `'open'` or `'closed'`, carrying the failure behind it. */
  failed(mode: 'open' | 'closed', error: LimiterError): Decision
  /** A refusal the blocked-key cache remembers, counted down by the `elapsedMs` since. */
  blocked(decision: Decision, elapsedMs: number): Decision
}

// What every decision of one limiter shares.
interface Maker {
  readonly set: PolicySet
  readonly owner: DecisionOwner
  readonly first: NamedPolicy
}

/** Builds the decisions of a limiter holding `set`. */
export function decisionsFor(set: PolicySet): Decisions {
  const { policies } = set
  const m: Maker = {
    set,
    owner: Object.freeze({ names: policies.map((p) => p.name) }),
    first: policies[0] as NamedPolicy,
  }
  const several = policies.length > 1
  const one: Decisions['one'] = (
    allowed,
    remaining,
    resetMs,
    retryAfterMs,
    ticket,
    source,
    delayMs = 0,
  ) => oneDecision(m, allowed, remaining, resetMs, retryAfterMs, ticket, source, delayMs)
  return {
    owner: m.owner,
    one,
    ...storeDecisions(m.owner, m.first.limit),
    of(value, source) {
      if (several) return fromOutcomes(m, value as readonly StoreDecision[], source)
      const d = value as StoreDecision
      return one(d.allowed, d.remaining, d.resetMs, d.retryAfterMs, d.ticket, source, d.delayMs)
    },
    failed: (mode, error) => failedDecision(m, several, mode, error),
    blocked: (decision, elapsedMs) => blockedDecision(m, several, decision, elapsedMs),
  }
}

// The one-policy Decisions of a store's answers read at once (`Decisions.fromStore`, and
// `Decisions.answer` for a cost-1 answer's numbers). The latest refusal, frozen, is handed out
// again while the store refuses with the same numbers (a hot key refused within one ms): a
// client over its limit costs no new object per request.
function storeDecisions(
  owner: DecisionOwner,
  limit: number,
): Pick<Decisions, 'answer' | 'fromStore'> {
  let refused: LimiterDecision | undefined
  const refusal = (remaining: number, resetMs: number, retryAfterMs: number, delayMs: number) => {
    const r = refused
    if (
      r !== undefined &&
      r.remaining === remaining &&
      r.resetMs === resetMs &&
      r.retryAfterMs === retryAfterMs &&
      r.delayMs === delayMs
    )
      return r
    const made = stored(owner, false, limit, remaining, resetMs, retryAfterMs, undefined, delayMs)
    Object.freeze(made)
    refused = made
    return made
  }
  return {
    answer: (allowed, remaining, resetMs, retryAfterMs) =>
      allowed
        ? stored(owner, true, limit, remaining, resetMs, retryAfterMs, undefined, 0)
        : refusal(remaining, resetMs, retryAfterMs, 0),
    fromStore: (d) =>
      !d.allowed && d.ticket === undefined
        ? refusal(d.remaining, d.resetMs, d.retryAfterMs, d.delayMs ?? 0)
        : stored(
            owner,
            d.allowed,
            limit,
            d.remaining,
            d.resetMs,
            d.retryAfterMs,
            d.ticket,
            d.delayMs ?? 0,
          ),
  }
}

// A one-policy decision the store answered.
function stored(
  owner: DecisionOwner,
  allowed: boolean,
  limit: number,
  remaining: number,
  resetMs: number,
  retryAfterMs: number,
  ticket: string | undefined,
  delayMs: number,
): LimiterDecision {
  return new LimiterDecision(
    owner,
    allowed,
    limit,
    remaining,
    resetMs,
    retryAfterMs,
    ticket,
    'store',
    undefined,
    delayMs,
  )
}

function oneDecision(
  m: Maker,
  allowed: boolean,
  remaining: number,
  resetMs: number,
  retryAfterMs: number,
  ticket: Ticket,
  source: DecisionSource,
  delayMs = 0,
): LimiterDecision {
  const { owner, first } = m
  return new LimiterDecision(
    owner,
    allowed,
    first.limit,
    remaining,
    resetMs,
    retryAfterMs,
    ticket,
    source,
    undefined,
    delayMs,
  )
}

// One entry per policy, and the limiter's own fields from them (`delayMs`: the admission's
// wait, the longest of its policies').
function fromEntries(
  m: Maker,
  entries: readonly PolicyDecision[],
  ticket: Ticket,
  source: DecisionSource,
  delayMs = 0,
): LimiterDecision {
  const top = combineDecisions(m.set, entries)
  return new LimiterDecision(
    m.owner,
    top.allowed,
    top.limit,
    top.remaining,
    top.resetMs,
    top.retryAfterMs,
    ticket,
    source,
    entries,
    top.allowed ? delayMs : 0,
  )
}

// A several-policies answer; one plain loop, as it runs for every such decision.
function fromOutcomes(
  m: Maker,
  outcomes: readonly StoreDecision[],
  source: DecisionSource,
): LimiterDecision {
  const { policies } = m.set
  const n = outcomes.length
  const entries: PolicyDecision[] = new Array(n)
  let tickets: Array<string | undefined> | undefined
  let delayMs = 0
  for (let i = 0; i < n; i++) {
    const o = outcomes[i] as StoreDecision
    entries[i] = entry(policies[i] as NamedPolicy, o)
    if (o.ticket !== undefined) {
      tickets ??= new Array(n).fill(undefined)
      tickets[i] = o.ticket
    }
    if (o.delayMs !== undefined && o.delayMs > delayMs) delayMs = o.delayMs
  }
  return fromEntries(m, entries, tickets, source, delayMs)
}

// failureMode 'open' admits every policy with its whole limit left; 'closed' refuses every
// policy for a second. Neither counted anything (adapters send no quota for them).
function failedDecision(
  m: Maker,
  several: boolean,
  mode: 'open' | 'closed',
  error: LimiterError,
): Decision {
  const open = mode === 'open'
  const source = open ? 'fail-open' : 'fail-closed'
  const wait = open ? 0 : 1000
  const decision = several
    ? fromEntries(
        m,
        m.set.policies.map((p) =>
          entry(p, {
            allowed: open,
            remaining: open ? p.limit : 0,
            resetMs: wait,
            retryAfterMs: wait,
          }),
        ),
        undefined,
        source,
      )
    : oneDecision(m, open, open ? m.first.limit : 0, wait, wait, undefined, source)
  return LimiterDecision.failed(decision, error)
}

// A cached refusal, its times counted down by the ms since the store made it.
function blockedDecision(
  m: Maker,
  several: boolean,
  decision: Decision,
  elapsedMs: number,
): Decision {
  const down = (ms: number): number => Math.max(0, Math.ceil(ms - elapsedMs))
  if (!several)
    return oneDecision(
      m,
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
  return fromEntries(m, entries, undefined, 'blocked-cache')
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

/**
 * The guard handlers that turn a store's answer into a decision (a list of per-policy ones, or
 * plain values), passed through `remember` (the blocked-key cache).
 */
export function storeAnswers(
  decisions: Decisions,
  remember: (c: StoreCall, decision: Decision, sentAtMs: number) => Decision,
): Pick<Handlers<Decision>, 'value' | 'decided'> {
  return {
    value: (c, value, sentAtMs) =>
      remember(c, decisions.of(value as StoreDecision | StoreDecision[], 'store'), sentAtMs),
    decided: (c, allowed, remaining, resetMs, retryAfterMs, ticket, delayMs, sentAtMs) =>
      remember(
        c,
        decisions.one(allowed, remaining, resetMs, retryAfterMs, ticket, 'store', delayMs),
        sentAtMs,
      ),
  }
}
