// The default limited body: an RFC 9457 problem document of the draft's `quota-exceeded` type.

import { wholeUnit } from '../common/duration.js'
import type { Decision } from '../decision/decision.js'
import { type HeaderPolicy, retryAfterSeconds } from './headers.js'
import type { DeniedCheck, LimitedBody } from './types.js'

export type { LimitedBody }

/**
 * A `message` as a response body: a string as `text/plain`, an object as JSON; `undefined` for
 * anything else, or an object `JSON.stringify` cannot serialize (a cycle, a BigInt).
 */
export function messageBodyOf(value: unknown): LimitedBody | undefined {
  if (typeof value === 'string') return { contentType: 'text/plain; charset=utf-8', body: value }
  if (value === null || typeof value !== 'object') return undefined
  let body: string | undefined
  try {
    body = JSON.stringify(value)
  } catch {
    return undefined
  }
  return body === undefined ? undefined : { contentType: 'application/json; charset=utf-8', body }
}

/** The problem type the IETF RateLimit draft registers for an exceeded quota. */
export const QUOTA_EXCEEDED_TYPE = 'https://iana.org/assignments/http-problem-types#quota-exceeded'

/** The media type of an RFC 9457 problem document. */
export const PROBLEM_JSON = 'application/problem+json'

/** A window in words: `'15 minutes'`, `'1 hour'`, `'1500 ms'`. */
export function windowText(windowMs: number): string {
  const unit = wholeUnit(windowMs)
  if (unit === undefined) return `${windowMs} ms`
  return `${unit.count} ${unit.word}${unit.count === 1 ? '' : 's'}`
}

// The decision-independent part of each policy's problem text, computed once per policy.
const summaries = new WeakMap<HeaderPolicy, string>()

function summary(policy: HeaderPolicy): string {
  let text = summaries.get(policy)
  if (text === undefined) {
    const requests = `${policy.limit} request${policy.limit === 1 ? '' : 's'}`
    text =
      policy.concurrent === true
        ? `The limit is ${requests} in flight at once.`
        : `The limit is ${requests} per ${windowText(policy.windowMs)}.`
    summaries.set(policy, text)
  }
  return text
}

// One refusing policy of several, by name: `The "daily" limit is 1000 requests per 1 day.`
function named(policy: HeaderPolicy): string {
  return `The ${JSON.stringify(policy.name)} ${summary(policy).slice(4)}`
}

// The policies that refused: every member whose entry refused (a limiter with several), or the
// one policy.
function violatedOf(policy: HeaderPolicy, decision: Decision): readonly HeaderPolicy[] {
  const { members } = policy
  if (members === undefined) return [policy]
  const refused = members.filter((_, i) => decision.policies[i]?.allowed === false)
  return refused.length > 0 ? refused : [policy]
}

/**
 * The default limited body: `type` quota-exceeded, `title`, `status`, a `detail` saying when to
 * retry, and the draft's `violated-policies` member naming the policy.
 *
 * @example
 * problemBody(429, headerPolicy('login', 5, 900_000), decision).contentType // 'application/problem+json'
 */
export function problemBody(status: number, policy: HeaderPolicy, decision: Decision): LimitedBody {
  const seconds = retryAfterSeconds(decision)
  const retry = `Retry in ${seconds} second${seconds === 1 ? '' : 's'}.`
  if (policy.members === undefined) {
    // one policy: all but the seconds are the same for every refusal, serialized once
    const frame = problemFrame(status, policy)
    // a flood of refusals mostly says the same seconds: the last body is kept
    if (frame.seconds !== seconds) {
      frame.seconds = seconds
      frame.body = `${frame.head}${JSON.stringify(`${summary(policy)} ${retry}`)}${frame.tail}`
    }
    return { contentType: PROBLEM_JSON, body: frame.body }
  }
  const violated = violatedOf(policy, decision)
  const problem = {
    ...problemHead(status),
    detail: `${violated.map(named).join(' ')} ${retry}`,
    'violated-policies': violated.map((p) => p.name),
  }
  return { contentType: PROBLEM_JSON, body: JSON.stringify(problem) }
}

const problemHead = (status: number) => ({
  type: QUOTA_EXCEEDED_TYPE,
  title: 'Request quota exceeded',
  status,
})

// The JSON of a one-policy problem around its `detail` string (what JSON.stringify writes before
// and after it), per policy and status, with the last body written.
interface Frame {
  readonly status: number
  readonly head: string
  readonly tail: string
  seconds: number
  body: string
}
const frames = new WeakMap<HeaderPolicy, Frame>()

function problemFrame(status: number, policy: HeaderPolicy): Frame {
  const known = frames.get(policy)
  if (known !== undefined && known.status === status) return known
  const frame: Frame = {
    status,
    head: `${JSON.stringify(problemHead(status)).slice(0, -1)},"detail":`,
    tail: `,"violated-policies":${JSON.stringify([policy.name])}}`,
    seconds: -1,
    body: '',
  }
  frames.set(policy, frame)
  return frame
}

/**
 * The body of the 403 sent to a request the adapter's `deny` refused. Its type is `about:blank`:
 * the problem is exactly what the status says (RFC 9457 section 4.2.1).
 */
export function forbiddenBody(): LimitedBody {
  const problem = {
    type: 'about:blank',
    title: 'Forbidden',
    status: 403,
    detail: 'This client may not make this request.',
  }
  return { contentType: PROBLEM_JSON, body: JSON.stringify(problem) }
}

/**
 * The body of a 503 sent when a concurrency policy's fleet `reserve` refused a request (the
 * slots left are kept for higher priorities): the server is busy, not the client over its quota.
 */
export function overloadedBody(decision: Pick<Decision, 'retryAfterMs'>): LimitedBody {
  const seconds = retryAfterSeconds(decision)
  const problem = {
    type: 'about:blank',
    title: 'Service Unavailable',
    status: 503,
    detail: `The server is busy with higher-priority requests. Retry in ${seconds} second${seconds === 1 ? '' : 's'}.`,
  }
  return { contentType: PROBLEM_JSON, body: JSON.stringify(problem) }
}

/**
 * The body of a 503 sent when the store failed and `failureMode` is `'closed'`: rate limiting
 * could not decide, so the request is refused without blaming the client's quota.
 */
export function unavailableBody(decision: Decision): LimitedBody {
  const seconds = retryAfterSeconds(decision)
  const problem = {
    type: 'about:blank',
    title: 'Service Unavailable',
    status: 503,
    detail: `Rate limiting is temporarily unavailable. Retry in ${seconds} second${seconds === 1 ? '' : 's'}.`,
  }
  return { contentType: PROBLEM_JSON, body: JSON.stringify(problem) }
}

/** What a request that `deny` refused comes to: 403 and a problem document. */
export const DENIED: DeniedCheck = Object.freeze({
  denied: true,
  response: Object.freeze({ status: 403, ...forbiddenBody() }),
})
