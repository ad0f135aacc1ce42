// The Decision: what a limiter answers for one request.
import type { LimiterError } from './errors.js'

/**
 * Who made a decision:
 * - `'store'`: the limiter's store (Redis, or the MemoryStore it was given);
 * - `'blocked-cache'`: the process-local cache of a refusal the store made moments ago;
 * - `'local'`: the process-local fallback of `failureMode: 'local'` while the store failed;
 * - `'fail-open'` / `'fail-closed'`: nobody; the store failed and `failureMode` answered. Such a
 *   decision's `remaining` and `resetMs` are placeholders, and adapters send no quota for it.
 */
export type DecisionSource = 'store' | 'blocked-cache' | 'local' | 'fail-open' | 'fail-closed'

/**
 * The answer to "may this request go ahead, and if not, when?". All times are milliseconds from now.
 *
 * - `allowed`: the request may proceed (its cost was counted).
 * - `limit`: the policy's `limit` (requests per window).
 * - `remaining`: whole requests of cost 1 that would still pass right now.
 * - `resetMs`: ms until the key is back to full capacity (0 when it already is).
 * - `retryAfterMs`: 0 when allowed; otherwise ms until the same request would pass if nobody
 *   else consumed meanwhile.
 * - `source`: who decided (see {@link DecisionSource}); only `'fail-open'` and `'fail-closed'`
 *   decisions were made without counting.
 * - `policies`: one entry per policy of the limiter, in declaration order (one for a one-policy
 *   limiter). The top-level fields describe the limiter as a whole: `allowed` when every policy
 *   admitted; `retryAfterMs` the longest of the refusing policies'; `limit`, `remaining` and
 *   `resetMs` those of the most constraining policy (the fewest remaining; on a tie, the first
 *   declared). After a refusal nothing was counted, and each entry reports what its policy holds.
 */
export interface Decision {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  readonly resetMs: number
  readonly retryAfterMs: number
  readonly source: DecisionSource
  readonly policies: readonly PolicyDecision[]
}

/** One policy's part of a {@link Decision}: the same fields, for that policy alone. */
export interface PolicyDecision {
  readonly name: string
  /** This policy admitted the request's cost (the request itself passed only if all did). */
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  readonly resetMs: number
  readonly retryAfterMs: number
}

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

/** A refund ticket: sliding-log's, or one per policy for a limiter with several. */
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
  readonly source: DecisionSource
  #policies: readonly PolicyDecision[] | undefined
  readonly #ticket: Ticket
  readonly #owner: DecisionOwner
  #failure: LimiterError | undefined

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
  ) {
    this.allowed = allowed
    this.limit = limit
    this.remaining = remaining
    this.resetMs = resetMs
    this.retryAfterMs = retryAfterMs
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

  /** The plain fields, `policies` included (a getter `JSON.stringify` would skip). */
  toJSON(): Omit<Decision, never> {
    const { allowed, limit, remaining, resetMs, retryAfterMs, source, policies } = this
    return { allowed, limit, remaining, resetMs, retryAfterMs, source, policies }
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
