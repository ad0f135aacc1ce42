// The Decision: what a limiter answers for one request.

/**
 * The answer to "may this request go ahead, and if not, when?". All times are milliseconds from now.
 *
 * - `allowed`: the request may proceed (its cost was counted).
 * - `limit`: the policy's `limit` (requests per window).
 * - `remaining`: whole requests of cost 1 that would still pass right now.
 * - `resetMs`: ms until the key is back to full capacity (0 when it already is).
 * - `retryAfterMs`: 0 when allowed; otherwise ms until the same request would pass if nobody
 *   else consumed meanwhile.
 */
export interface Decision {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  readonly resetMs: number
  readonly retryAfterMs: number
}
