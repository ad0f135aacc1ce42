// The Decision: what a limiter answers for one request.
import type { LimiterError } from '../common/errors.js'

export type { Decision, DecisionReason, DecisionSource, PolicyDecision } from './types.js'

import type { Decision, DecisionReason, DecisionSource, PolicyDecision } from './types.js'

/**
 * The index of the most constraining of a limiter's policy decisions: the fewest `remaining`;
 * on a tie, the first declared. It is the policy a refusal is reported by (a refusing policy has
 * fewer remaining than the request's cost, an admitting one at least that many).
 */
export function constrainingIndex(policies: readonly { readonly remaining: number }[]): number {
  let best = 0
  for (let i = 1; i < policies.length; i++) {
    if (
      (policies[i] as { remaining: number }).remaining <
      (policies[best] as { remaining: number }).remaining
    )
      best = i
  }
  return best
}

/** What a limiter shares with every decision it makes: its policies' names. */
export interface DecisionOwner {
  readonly names: readonly string[]
}

/** Whether `decision` was answered by `failureMode` `'open'` or `'closed'`, with no count behind it. */
export function isUncounted(decision: Decision): boolean {
  return decision.source === 'fail-open' || decision.source === 'fail-closed'
}

/**
 * What identifies an admission for its refund or release: sliding-log's record, concurrency's
 * lease; one per policy for a limiter with several.
 */
export type Ticket = string | readonly (string | undefined)[] | undefined

/**
 * Internal: the Decision a limiter returns. It can carry sliding-log's refund tickets, in a
 * private field that callers, `JSON.stringify` and deep equality never see; only the limiter
 * that made it reads them back ({@link ticketOf}). A one-policy decision builds its `policies`
 * entry when first read: most callers never look.
 */
export class LimiterDecision implements Decision {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  readonly resetMs: number
  readonly retryAfterMs: number
  readonly delayMs: number
  readonly source: DecisionSource
  #policies: readonly PolicyDecision[] | undefined
  readonly #ticket: Ticket
  readonly #owner: DecisionOwner
  #failure: LimiterError | undefined
  #reason: DecisionReason | undefined

  constructor(
    owner: DecisionOwner,
    allowed: boolean,
    limit: number,
    remaining: number,
    resetMs: number,
    retryAfterMs: number,
    ticket: Ticket,
    source: DecisionSource,
    policies?: readonly PolicyDecision[],
    delayMs = 0,
  ) {
    this.allowed = allowed
    this.limit = limit
    this.remaining = remaining
    this.resetMs = resetMs
    this.retryAfterMs = retryAfterMs
    this.delayMs = delayMs
    this.source = source
    this.#policies = policies
    this.#ticket = ticket
    this.#owner = owner
  }

  get policies(): readonly PolicyDecision[] {
    this.#policies ??= Object.freeze([
      Object.freeze({
        name: this.#owner.names[0] as string,
        allowed: this.allowed,
        limit: this.limit,
        remaining: this.remaining,
        resetMs: this.resetMs,
        retryAfterMs: this.retryAfterMs,
      }),
    ])
    return this.#policies
  }

  /** Why this refusal is not the client's doing (`'reserve'`), else `undefined`. */
  get reason(): DecisionReason | undefined {
    return this.#reason
  }

  /** The plain fields, `policies` included (a getter `JSON.stringify` would skip). */
  toJSON(): Omit<Decision, never> {
    const { allowed, limit, remaining, resetMs, retryAfterMs, delayMs, source, policies } = this
    const plain = { allowed, limit, remaining, resetMs, retryAfterMs, delayMs, source, policies }
    return this.#reason === undefined ? plain : { ...plain, reason: this.#reason }
  }

  /** Marks a refusal `reason` explains (a fleet reserve's). */
  static because<D extends LimiterDecision>(decision: D, reason: DecisionReason): D {
    decision.#reason = reason
    return decision
  }

  /** Marks a decision `failureMode` answered with the store failure behind it. */
  static failed<D extends LimiterDecision>(decision: D, failure: LimiterError): D {
    decision.#failure = failure
    return decision
  }

  /** The store failure behind `decision` (see `failureOf`). */
  static failureOf(decision: Decision): LimiterError | undefined {
    return #failure in decision ? decision.#failure : undefined
  }

  /** The ticket `decision` carries, if `owner` made it (else `undefined`). */
  static ticketOf(decision: Decision, owner: DecisionOwner): Ticket {
    return #owner in decision && decision.#owner === owner ? decision.#ticket : undefined
  }
}
