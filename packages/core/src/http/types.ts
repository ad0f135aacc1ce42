// What a request's check comes to, and the limited response: the types the check, the response
// side and the options share, in a module of their own so those import one way (options <- check,
// options <- handle), never in a circle.
import type { Decision } from '../decision/decision.js'
import type { Limiter } from '../limiter/types.js'
import type { HeaderPair, HeaderPolicy } from './headers.js'

/** A precomputed limited-response body. */
export interface LimitedBody {
  readonly contentType: string
  readonly body: string
}

/** A limited response: status, content type and body text. */
export interface LimitedResponse extends LimitedBody {
  readonly status: number
}

/** The outcome of `checkRequest` for a request that was counted. */
export interface RateLimitCheck {
  readonly decision: Decision
  /** The limiter that decided (for a refund): the fixed one, or the one `limits` chose. */
  readonly limiter: Limiter
  /**
   * The limiter holds a concurrency policy: an admission holds a lease until
   * the response is over (`settleCheck` arms its release).
   */
  readonly leases: boolean
  /** The store key (the route scope included). */
  readonly key: string
  readonly cost: number
  /** The policy as clients see it (name, limit, window). */
  readonly policy: HeaderPolicy
  /** Header pairs to merge into the response (`Retry-After` included on a denial). */
  readonly headers: HeaderPair[]
  /**
   * The limiter is in shadow mode: a refusal is not enforced (the adapter goes on, nothing
   * waits) and no rate-limit headers are sent.
   */
  readonly shadow: boolean
  /** Not refused by `deny` (see {@link DeniedCheck}). */
  readonly denied?: undefined
  /**
   * Admitted by the `shed` option's shedder: its `done`, to call once when the request is over
   * (the lifecycle that releases leases calls it), with the response's final status
   * (`undefined` when the client went away first): a 429 or 503 from a limiter further on ends
   * it without teaching the adaptive limit, as does `ran: false` (the request never reached its
   * handler: a `maxDelay` wait given up). The time it waited on purpose (`delayMs`) is not
   * service time: it is taken off the sample.
   */
  readonly over?: ((status?: number, ran?: boolean) => void) | undefined
}

/**
 * The outcome for a request that the adapter's `deny` refused: nothing was counted; the adapter
 * sends `response` (403 and a problem document) and stops.
 */
export interface DeniedCheck {
  readonly denied: true
  readonly response: LimitedResponse
}

/** What a request's check comes to: counted, refused by `deny`, or skipped (`undefined`). */
export type CheckResult = RateLimitCheck | DeniedCheck | undefined
