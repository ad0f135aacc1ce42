// What an admitted request owes back once it is over, as a promise: for hosts that hand the
// promise to the runtime (a Fetch host's `waitUntil`) instead of letting it run unobserved.
import type { ResolvedRateLimit } from './options.js'
import type { RateLimitCheck } from './types.js'

// Store failures are reported through onError by the limiter: nothing is left to handle here.
const ignore = (): void => {}

/**
 * What an admitted request owes once it is over, as a function to call with the final status
 * (`undefined` when the client went away first); only its first call counts, and it returns the
 * store call's promise (which never rejects), or `undefined` when that call owes nothing. It
 * refunds the cost under `skipSuccessfulRequests` / `skipFailedRequests` / `skipAbortedRequests`
 * (passing the decision, so a concurrency lease comes back with the refund), else releases the
 * lease of a concurrency policy. `undefined` when nothing can be owed (the usual case).
 */
export function owedOnce<Req>(
  rl: ResolvedRateLimit<Req, unknown>,
  check: RateLimitCheck,
): ((status: number | undefined) => Promise<void> | undefined) | undefined {
  const { leases, over } = check
  const counted =
    check.decision.allowed &&
    (leases || rl.skipSuccessfulRequests || rl.skipFailedRequests || rl.skipAbortedRequests)
  if (!counted && over === undefined) return undefined
  let settled = false
  return (status) => {
    if (settled) return undefined
    settled = true
    // the shedder's admission ends with the request (a refusal further on teaches it nothing)
    over?.(status)
    if (!counted) return undefined
    // An aborted request ran its handler: it stays counted unless skipAbortedRequests says not.
    const refund =
      status === undefined
        ? rl.skipAbortedRequests
        : status < 400
          ? rl.skipSuccessfulRequests
          : rl.skipFailedRequests
    if (refund) return check.limiter.refund(check.key, check.cost, check.decision).catch(ignore)
    // A lease whose release fails expires after its policy's window.
    if (leases) return check.limiter.release(check.key, check.decision).catch(ignore)
    return undefined
  }
}

/**
 * Gives back the reservation of a request that never ran (its client left while it waited for
 * its `maxDelay` slot), whatever the skip options say; a concurrency lease comes back with it.
 */
export function giveBackReservation(check: RateLimitCheck): Promise<void> {
  // it never ran: its round trip teaches the adaptive limit nothing
  check.over?.(undefined, false)
  return check.limiter.refund(check.key, check.cost, check.decision).catch(ignore)
}
