// The exception a limited request throws, for Nest's exception layer to render.
import type { Decision } from '@limiter/core'
import type { LimitedResponse } from '@limiter/core/http'
import { HttpException } from '@nestjs/common'

/**
 * A limited request (429, or 503 when the store failed and `failureMode` is `'closed'`). Its
 * response is the body as an object: by default an RFC 9457 problem document. The guard has set
 * `Content-Type` (`contentType`), `Retry-After` and the rate-limit headers on the response before
 * throwing it: a filter of yours that reshapes the body sets its own `Content-Type`.
 */
export class RateLimitException extends HttpException {
  /** The decision that refused the request. */
  readonly decision: Decision
  /** The media type of the default body, such as `application/problem+json`. */
  readonly contentType: string

  constructor(limited: LimitedResponse, decision: Decision) {
    super(bodyOf(limited), limited.status)
    this.decision = decision
    this.contentType = limited.contentType
  }
}

// JSON bodies as objects (Nest's filters render objects as they are); text stays text.
function bodyOf(limited: LimitedResponse): string | Record<string, unknown> {
  return limited.contentType.includes('json')
    ? (JSON.parse(limited.body) as Record<string, unknown>)
    : limited.body
}
