// Headers onto a Fetch `Response`, whose headers may be immutable (from `fetch()`, or
// `Response.redirect()`): a copy is made then, never an error.
import { nowMs } from '../common/clock.js'
import { formatHeaders, type HeaderPair } from '../http/headers.js'
import { mergeHeaders } from '../http/merge-headers.js'
import type { LimitedResponse, RateLimitCheck } from '../http/types.js'

// The pairs to set: the check's own, merged with what the response holds (several limiters
// append list members; single values keep the strictest).
function pairsFor(headers: Headers, pairs: readonly HeaderPair[], check: RateLimitCheck) {
  let fresh = true
  for (const pair of pairs) {
    if (headers.has(pair[0])) {
      fresh = false
      break
    }
  }
  if (fresh) return pairs
  return mergeHeaders(
    pairs,
    (name) => headers.get(name) ?? undefined,
    (standard) => formatHeaders([standard], check.policy, check.decision, nowMs),
  )
}

// Sets every pair (each `set` replaces, so setting them again on a copy is harmless).
function setAll(headers: Headers, pairs: readonly HeaderPair[]): void {
  for (const [name, value] of pairs) headers.set(name, value)
}

/**
 * A copy of `res` that can be changed: same status, status text, headers and body (the body is
 * handed over, not read). `undefined` when no copy can be made (a status outside 200 to 599,
 * such as 101 for a WebSocket upgrade, or a body already read).
 */
export function mutableCopy(res: Response): Response | undefined {
  try {
    return new Response(res.body, res)
  } catch {
    return undefined
  }
}

/**
 * `res` with the check's headers merged in: the same response when its headers can be changed,
 * else a copy. A response that cannot be copied goes out as it is, without them.
 */
export function withHeaders(
  res: Response,
  pairs: readonly HeaderPair[],
  check: RateLimitCheck,
): Response {
  if (pairs.length === 0) return res
  const merged = pairsFor(res.headers, pairs, check)
  try {
    setAll(res.headers, merged)
    return res
  } catch {
    // immutable headers (a TypeError): the merge was computed from the original, so it holds
    const copy = mutableCopy(res)
    if (copy === undefined) return res
    try {
      setAll(copy.headers, merged)
    } catch {
      return res
    }
    return copy
  }
}

/** A limited response (from `limitedResponse`, or `deny`'s 403) as a Fetch `Response`. */
export function refusal(
  limited: LimitedResponse,
  pairs: readonly HeaderPair[],
  respond: Respond = (body, init) => new Response(body, init),
): Response {
  const headers = new Headers(pairs as HeaderPair[])
  headers.set('content-type', limited.contentType)
  return respond(limited.body, { status: limited.status, headers })
}

/** How a host builds a response from a body and its status and headers. */
export type Respond = (body: string, init: { status: number; headers: Headers }) => Response
