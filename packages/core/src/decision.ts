// The Decision: what a limiter answers for one request.

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
 */
export interface Decision {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  readonly resetMs: number
  readonly retryAfterMs: number
  readonly source: DecisionSource
}

/** Whether `decision` was answered by `failureMode` `'open'` or `'closed'`, with no count behind it. */
export function isUncounted(decision: Decision): boolean {
  return decision.source === 'fail-open' || decision.source === 'fail-closed'
}

/**
 * Internal: the Decision a limiter returns. It can carry sliding-log's refund ticket, in a
 * private field that callers, `JSON.stringify` and deep equality never see; only the limiter
 * that made it reads it back ({@link ticketOf}).
 */
export class LimiterDecision implements Decision {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  readonly resetMs: number
  readonly retryAfterMs: number
  readonly source: DecisionSource
  readonly #ticket: string | undefined
  readonly #owner: object

  constructor(
    owner: object,
    allowed: boolean,
    limit: number,
    remaining: number,
    resetMs: number,
    retryAfterMs: number,
    ticket: string | undefined,
    source: DecisionSource,
  ) {
    this.allowed = allowed
    this.limit = limit
    this.remaining = remaining
    this.resetMs = resetMs
    this.retryAfterMs = retryAfterMs
    this.source = source
    this.#ticket = ticket
    this.#owner = owner
  }

  /** The ticket `decision` carries, if `owner` made it (else `undefined`). */
  static ticketOf(decision: Decision, owner: object): string | undefined {
    return #owner in decision && decision.#owner === owner ? decision.#ticket : undefined
  }
}
