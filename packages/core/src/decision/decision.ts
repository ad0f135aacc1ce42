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

// What few decisions carry beyond their fields, kept apart so the common one writes none of it.
interface Extra {
  policies?: readonly PolicyDecision[] | undefined
  ticket?: Ticket
  failure?: LimiterError | undefined
  reason?: DecisionReason | undefined
}

/**
 * Internal: the Decision a limiter returns. It can carry sliding-log's refund tickets, in a
 * private field that callers, `JSON.stringify` and deep equality never see; only the limiter
 * that made it reads them back ({@link ticketOf}). A one-policy decision builds its `policies`
 * entry when first read: most callers never look.
 *
 * Its public fields are `declare`d: written once, by the constructor, in this order (a class
 * field would first define each as `undefined`). The rare parts (tickets, given `policies`, a
 * failure, a reason) share one private field, absent on the common decision.
 */
export class LimiterDecision implements Decision {
  declare readonly allowed: boolean
  declare readonly limit: number
  declare readonly remaining: number
  declare readonly resetMs: number
  declare readonly retryAfterMs: number
  declare readonly delayMs: number
  declare readonly source: DecisionSource
  readonly #owner: DecisionOwner
  #extra: Extra | undefined

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
    this.#owner = owner
    this.#extra = ticket === undefined && policies === undefined ? undefined : { policies, ticket }
  }

  get policies(): readonly PolicyDecision[] {
    const extra = LimiterDecision.#extraOf(this)
    extra.policies ??= Object.freeze([
      Object.freeze({
        name: this.#owner.names[0] as string,
        allowed: this.allowed,
        limit: this.limit,
        remaining: this.remaining,
        resetMs: this.resetMs,
        retryAfterMs: this.retryAfterMs,
      }),
    ])
    return extra.policies
  }

  /** Why this refusal is not the client's doing (`'reserve'`), else `undefined`. */
  get reason(): DecisionReason | undefined {
    return this.#extra?.reason
  }

  /** The plain fields, `policies` included (a getter `JSON.stringify` would skip). */
  toJSON(): Omit<Decision, never> {
    const { allowed, limit, remaining, resetMs, retryAfterMs, delayMs, source, policies } = this
    const plain = { allowed, limit, remaining, resetMs, retryAfterMs, delayMs, source, policies }
    const reason = this.#extra?.reason
    return reason === undefined ? plain : { ...plain, reason }
  }

  /** Marks a refusal `reason` explains (a fleet reserve's). */
  static because<D extends LimiterDecision>(decision: D, reason: DecisionReason): D {
    LimiterDecision.#extraOf(decision).reason = reason
    return decision
  }

  /** Marks a decision `failureMode` answered with the store failure behind it. */
  static failed<D extends LimiterDecision>(decision: D, failure: LimiterError): D {
    LimiterDecision.#extraOf(decision).failure = failure
    return decision
  }

  // The decision's rare parts, made when first needed.
  static #extraOf(decision: LimiterDecision): Extra {
    decision.#extra ??= {}
    return decision.#extra
  }

  /** The store failure behind `decision` (see `failureOf`). */
  static failureOf(decision: Decision): LimiterError | undefined {
    return #owner in decision ? decision.#extra?.failure : undefined
  }

  /** The ticket `decision` carries, if `owner` made it (else `undefined`). */
  static ticketOf(decision: Decision, owner: DecisionOwner): Ticket {
    return #owner in decision && decision.#owner === owner ? decision.#extra?.ticket : undefined
  }
}
