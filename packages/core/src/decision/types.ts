// The Decision's public shape, in a module that imports nothing (errors carry decisions too).

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
 * - `delayMs`: 0, unless the limiter has `maxDelay` (or `delayAfter`) and this admission reserved
 *   a later slot: then the request may go ahead only after waiting this long (its slot is held
 *   for it; give it back with `refund` if it will not go).
 * - `source`: who decided (see {@link DecisionSource}); only `'fail-open'` and `'fail-closed'`
 *   decisions were made without counting.
 * - `policies`: one entry per policy of the limiter, in declaration order (one for a one-policy
 *   limiter). The top-level fields describe the limiter as a whole: `allowed` when every policy
 *   admitted; `retryAfterMs` the longest of the refusing policies'; `limit`, `remaining` and
 *   `resetMs` those of the most constraining policy (the fewest remaining; on a tie, the first
 *   declared). After a refusal nothing was counted, and each entry reports what its policy holds.
 * - `reason`: absent, or `'reserve'` on a refusal made only by a concurrency policy's fleet
 *   `reserve`: the slots left are kept for higher priorities, the client is within its own
 *   limits (the adapters answer it 503, not 429); `'shed'` on an adapter's refusal by its `shed`
 *   option's shedder (nothing was counted; 503 too).
 */
export interface Decision {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  readonly resetMs: number
  readonly retryAfterMs: number
  readonly delayMs: number
  readonly source: DecisionSource
  readonly policies: readonly PolicyDecision[]
  readonly reason?: DecisionReason | undefined
}

/** Why a refusal that is not the client's doing was made: `'reserve'` (see {@link Decision}). */
export type DecisionReason = 'reserve' | 'shed'

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
