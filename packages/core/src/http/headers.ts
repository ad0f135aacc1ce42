// Rate-limit header fields: one pure function per standard, each returning [name, value] pairs.
import { constrainingIndex, type Decision, isUncounted } from '../decision/decision.js'

/** One header field: name and value. */
export type HeaderPair = [name: string, value: string]

/** The header sets a limiter can send. */
export type HeaderStandard = 'draft-10' | 'draft-7' | 'draft-6' | 'legacy'

/** Every header standard, newest first. */
export const HEADER_STANDARDS: readonly HeaderStandard[] = Object.freeze([
  'draft-10',
  'draft-7',
  'draft-6',
  'legacy',
])

/**
 * What the header functions need about one limiter, computed once per limiter (and route), so a
 * request only formats its own numbers.
 */
export interface HeaderPolicy {
  /** The policy name shown to clients (draft-10 lists and `violated-policies`). */
  readonly name: string
  readonly limit: number
  readonly windowMs: number
  /** draft-10 `RateLimit-Policy` member, e.g. `"gc100/1m";q=100;w=60`. */
  readonly policyMember: string
  /** draft-10 `RateLimit` member prefix: the name as a structured-field string. */
  readonly nameItem: string
  /** draft-6/7 `RateLimit-Policy` member, e.g. `100;w=60`. */
  readonly quotaPolicy: string
  /**
   * A concurrency policy: its quota is requests in flight (draft-10 `qu="concurrent-requests"`),
   * and no time refills it, so no header states a reset.
   */
  readonly concurrent?: true | undefined
  /**
   * A limiter with several policies: one entry per policy, in declaration order. draft-10 lists
   * them all; the older standards describe the most constraining one.
   */
  readonly members?: readonly HeaderPolicy[] | undefined
}

/**
 * The header policy of several policies (a limiter's `limits`): draft-10's `RateLimit-Policy`
 * lists every member; the rest describe the decision's most constraining member.
 *
 * @example
 * headerPolicies('api', [headerPolicy('burst', 10, 1000), headerPolicy('daily', 1000, 86_400_000)])
 *   .policyMember // '"burst";q=10;w=1, "daily";q=1000;w=86400'
 */
export function headerPolicies(name: string, members: readonly HeaderPolicy[]): HeaderPolicy {
  if (members.length === 1) return members[0] as HeaderPolicy
  const first = members[0] as HeaderPolicy
  return Object.freeze({
    ...first,
    // each member says whether it counts requests in flight; the list as a whole does not
    concurrent: undefined,
    name,
    nameItem: sfString(name),
    policyMember: members.map((m) => m.policyMember).join(', '),
    members: Object.freeze([...members]),
  })
}

// The member of `policy` that describes `decision` in a one-policy standard: the most
// constraining (or `policy` itself when it has no members).
function describing(policy: HeaderPolicy, decision: Decision): HeaderPolicy {
  const { members } = policy
  if (members === undefined) return policy
  return (members[constrainingIndex(decision.policies)] ?? policy) as HeaderPolicy
}

/** The fields {@link resetSeconds} reads: a decision, or one policy's entry in it. */
type Timing = Pick<Decision, 'allowed' | 'resetMs' | 'retryAfterMs'>

// RFC 9651 integers have at most 15 digits.
const SF_INTEGER_MAX = 999_999_999_999_999

function sfInteger(n: number): string {
  return String(Math.min(SF_INTEGER_MAX, Math.max(0, Math.floor(n))))
}

/**
 * Serializes a structured-field String (RFC 9651 section 4.1.6). Only printable ASCII is allowed,
 * so other characters are percent-encoded as UTF-8 (deterministic, and distinct names stay distinct).
 */
export function sfString(value: string): string {
  let out = ''
  for (const c of value) {
    if (c === '"' || c === '\\') out += `\\${c}`
    else if (c >= ' ' && c <= '~') out += c
    else
      out += [...Buffer.from(c, 'utf8')]
        .map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`)
        .join('')
  }
  return `"${out}"`
}

/** Whole seconds, rounded up. */
function ceilSeconds(ms: number): number {
  return Math.ceil(Math.max(0, ms) / 1000)
}

/**
 * Precomputes the policy strings for a limiter named `name`. A concurrency policy
 * (`concurrent`) states its quota in concurrent requests and no window: its `window` is how long
 * an unreleased lease lasts, not a period the quota refills in.
 *
 * @example
 * headerPolicy('api', 100, 60_000).policyMember // '"api";q=100;w=60'
 * headerPolicy('exports', 5, 120_000, true).policyMember // '"exports";q=5;qu="concurrent-requests"'
 */
export function headerPolicy(
  name: string,
  limit: number,
  windowMs: number,
  concurrent = false,
): HeaderPolicy {
  const nameItem = sfString(name)
  const q = sfInteger(limit)
  const w = sfInteger(ceilSeconds(windowMs))
  if (concurrent)
    return Object.freeze({
      name,
      limit,
      windowMs,
      nameItem,
      policyMember: `${nameItem};q=${q};qu="concurrent-requests"`,
      quotaPolicy: q,
      concurrent: true,
    })
  return Object.freeze({
    name,
    limit,
    windowMs,
    nameItem,
    policyMember: `${nameItem};q=${q};w=${w}`,
    quotaPolicy: `${q};w=${w}`,
  })
}

/** `Retry-After` seconds for a denial: rounded up, at least 1. */
export function retryAfterSeconds(decision: Pick<Decision, 'retryAfterMs'>): number {
  return Math.max(1, ceilSeconds(decision.retryAfterMs))
}

/**
 * The seconds a header reports as reset (`t`, `reset`): until the quota is full again when
 * allowed; on a denial, the same instant as `Retry-After`, so the two never disagree. An
 * admission that waits `waitedMs` for its reserved slot (`maxDelay`) is answered that much
 * later, and its reset is counted from then.
 */
export function resetSeconds(decision: Timing, waitedMs = 0): number {
  return decision.allowed
    ? ceilSeconds(Math.max(0, decision.resetMs - waitedMs))
    : retryAfterSeconds(decision)
}

/**
 * IETF draft-10: `RateLimit-Policy: "name";q=100;w=60` and `RateLimit: "name";r=42;t=17`; one
 * member per policy for a limiter with several.
 */
export function draft10Headers(policy: HeaderPolicy, decision: Decision): HeaderPair[] {
  const { members } = policy
  let rateLimit: string
  if (members === undefined) rateLimit = quotaItem(policy, decision, decision.delayMs)
  else {
    const entries = decision.policies
    rateLimit = members
      .map((m, i) => quotaItem(m, entries[i] ?? decision, decision.delayMs))
      .join(', ')
  }
  return [
    ['RateLimit-Policy', policy.policyMember],
    ['RateLimit', rateLimit],
  ]
}

function quotaItem(
  policy: HeaderPolicy,
  d: Timing & Pick<Decision, 'remaining'>,
  waitedMs: number,
): string {
  // a slot frees when a request ends, at no time anybody knows: no `t`
  if (policy.concurrent === true) return `${policy.nameItem};r=${sfInteger(d.remaining)}`
  return `${policy.nameItem};r=${sfInteger(d.remaining)};t=${sfInteger(resetSeconds(d, waitedMs))}`
}

/** IETF draft-7: `RateLimit-Policy: 100;w=60` and `RateLimit: limit=100, remaining=42, reset=17`. */
export function draft7Headers(given: HeaderPolicy, decision: Decision): HeaderPair[] {
  const policy = describing(given, decision)
  const limit = sfInteger(policy.limit)
  const remaining = sfInteger(decision.remaining)
  const quota = `limit=${limit}, remaining=${remaining}`
  return [
    ['RateLimit-Policy', policy.quotaPolicy],
    [
      'RateLimit',
      policy.concurrent === true
        ? quota
        : `${quota}, reset=${sfInteger(resetSeconds(decision, decision.delayMs))}`,
    ],
  ]
}

/** IETF draft-6: `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (seconds) and `RateLimit-Policy`. */
export function draft6Headers(given: HeaderPolicy, decision: Decision): HeaderPair[] {
  const policy = describing(given, decision)
  const pairs: HeaderPair[] = [
    ['RateLimit-Policy', policy.quotaPolicy],
    ['RateLimit-Limit', sfInteger(policy.limit)],
    ['RateLimit-Remaining', sfInteger(decision.remaining)],
  ]
  if (policy.concurrent !== true)
    pairs.push(['RateLimit-Reset', sfInteger(resetSeconds(decision, decision.delayMs))])
  return pairs
}

/** The de facto `X-RateLimit-Limit`, `-Remaining` and `-Reset` (epoch seconds, as the ecosystem expects). */
export function legacyHeaders(
  given: HeaderPolicy,
  decision: Decision,
  nowMs: number,
): HeaderPair[] {
  const policy = describing(given, decision)
  const pairs: HeaderPair[] = [
    ['X-RateLimit-Limit', sfInteger(policy.limit)],
    ['X-RateLimit-Remaining', sfInteger(decision.remaining)],
  ]
  if (policy.concurrent !== true)
    pairs.push(['X-RateLimit-Reset', String(Math.ceil(nowMs / 1000) + resetSeconds(decision))])
  return pairs
}

/** `Retry-After` in whole seconds (rounded up, at least 1). */
export function retryAfterHeader(decision: Decision): HeaderPair {
  return ['Retry-After', String(retryAfterSeconds(decision))]
}

function headersOf(
  standard: HeaderStandard,
  policy: HeaderPolicy,
  decision: Decision,
  nowMs: number | (() => number),
): HeaderPair[] {
  if (standard === 'draft-10') return draft10Headers(policy, decision)
  if (standard === 'draft-7') return draft7Headers(policy, decision)
  if (standard === 'draft-6') return draft6Headers(policy, decision)
  return legacyHeaders(policy, decision, typeof nowMs === 'number' ? nowMs : nowMs())
}

/**
 * All the headers for one decision: each standard in `standards`, plus `Retry-After` on a
 * denial (always, even with no standard). A decision `failureMode` answered (`'fail-open'`,
 * `'fail-closed'`) gets the policy fields only: no remaining quota, no reset. `nowMs` is only read by `'legacy'`; pass the clock
 * itself to read it only then.
 */
export function formatHeaders(
  standards: readonly HeaderStandard[],
  policy: HeaderPolicy,
  decision: Decision,
  nowMs: number | (() => number),
): HeaderPair[] {
  let out: HeaderPair[]
  // The usual case, one standard: its pairs are the answer.
  if (standards.length === 1)
    out = headersOf(standards[0] as HeaderStandard, policy, decision, nowMs)
  else {
    out = []
    for (const standard of standards) {
      for (const pair of headersOf(standard, policy, decision, nowMs)) {
        // draft-6 and draft-7 both send the same RateLimit-Policy: send it once.
        if (!out.some(([n, v]) => n === pair[0] && v === pair[1])) out.push(pair)
      }
    }
  }
  // A decision failureMode made counted nothing: claim no quota a client could burst into.
  if (isUncounted(decision)) out = out.filter(([name]) => !QUOTA_FIELDS.has(name))
  if (!decision.allowed) out.push(retryAfterHeader(decision))
  return out
}

// The fields that state a remaining quota or when it refills; the policy fields stay.
const QUOTA_FIELDS: ReadonlySet<string> = new Set([
  'RateLimit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
])
