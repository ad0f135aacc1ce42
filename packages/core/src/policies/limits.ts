// Several policies on one limiter: the `limits` option validated, where each policy's counters
// live, and how their decisions combine into the limiter's.

import { LimiterRangeError, LimiterTypeError } from '../common/errors.js'
import { checkOptionNames, ownOptions } from '../common/option-names.js'
import { constrainingIndex, type Decision } from '../decision/decision.js'
import { type DelayOptions, withDelays } from './delays.js'
import { checkName, claimName, defaultName, storeNamespace } from './naming.js'
import {
  ALGORITHM_CODE,
  capacityArg,
  definePolicy,
  type LimitSpec,
  type NamedPolicy,
  type Policy,
  RESERVING,
} from './policy.js'

/** The most policies one limiter holds. */
export const MAX_LIMITS = 8

/** A limiter's policies, with where each one's counters live. */
export interface PolicySet {
  readonly policies: readonly NamedPolicy[]
  /** `namespaces[i]`: the store namespace of `policies[i]`. */
  readonly namespaces: readonly string[]
  /** The largest cost every policy can admit: the smallest `burst`. */
  readonly maxCost: number
  /** The policies' numbers, for grouping calls that can travel in one script call. */
  readonly id: string
  /** The limiter's name: `name` when given, else its policies' names joined by `+`. */
  readonly name: string
  /** Whether a policy is `concurrency`: its admissions hold leases to release. */
  readonly leases: boolean
  /** Whether a policy has a fleet `reserve`: its decisions depend on the request's priority. */
  readonly reserve: boolean
  /**
   * The longest a request may wait for a reserved slot (ms, rounded up; 0 without `maxDelay` or
   * `delayAfter`): a refusal's Retry-After less this is when it could pass at the earliest.
   */
  readonly waitMs: number
}

/** What {@link policySetOf} reads: the policy options or `limits`, and the namespace options. */
export interface PolicySetOptions
  extends Partial<
      Record<'limit' | 'window' | 'algorithm' | 'burst' | 'retryAfter' | 'reserve', unknown>
    >,
    DelayOptions {
  readonly limits?: unknown
  readonly name?: unknown
}

const SPEC_FIELDS: ReadonlySet<string> = new Set([
  'limit',
  'window',
  'algorithm',
  'burst',
  'retryAfter',
  'reserve',
  'name',
])
const SHORTHAND = ['limit', 'window', 'algorithm', 'burst', 'retryAfter', 'reserve'] as const

/**
 * Validates the policy options (`limit`, `window`, `algorithm`, `burst`) or `limits`, names
 * each policy and places its counters: the shorthand's under `prefix + name` as always; a
 * `limits` policy's under `prefix` + the limiter's `name` (when given) + the policy's name, so
 * tiers with different numbers never share counters unless they share a name. Names chosen by
 * the user are claimed on `store` (see `claimName`).
 */
export function policySetOf(options: PolicySetOptions, prefix: string, store: object): PolicySet {
  const limits = options.limits
  if (limits === undefined) {
    const policy = definePolicy(options as never)
    const chosen = options.name !== undefined
    const name = chosen ? checkName('name', options.name, false) : defaultName(policy)
    const set = setOf(withDelays([{ ...policy, name }], options, false), [
      storeNamespace(prefix, name, policy.algorithm, chosen),
    ])
    // claimed for as long as the limiter holds its policies
    if (chosen) claimName(store, prefix, name, policy.algorithm, set.policies)
    return set
  }
  for (const option of SHORTHAND) {
    if (options[option] !== undefined)
      throw new LimiterRangeError(
        option,
        options[option],
        `cannot be combined with \`limits\`: give each policy its own \`${option}\` inside \`limits\``,
      )
  }
  const specs = checkedSpecs(limits)
  const limiterName = options.name === undefined ? '' : checkName('name', options.name, false)
  const base = limiterName === '' ? prefix : `${prefix}${limiterName}:`
  const policies: NamedPolicy[] = []
  const namespaces: string[] = []
  const claimed: string[] = []
  specs.forEach((given, i) => {
    const at = `limits[${i}]`
    const spec = ownOptions(given as LimitSpec, at)
    checkOptionNames(spec, SPEC_FIELDS, `${at}.`)
    const policy = definePolicy(spec, `${at}.`)
    const chosen = spec.name !== undefined
    const name = chosen ? checkName(`${at}.name`, spec.name, false) : defaultName(policy)
    const twin = policies.findIndex((p) => p.name === name)
    if (twin >= 0)
      throw new LimiterRangeError(
        `${at}.name`,
        name,
        `is also the name of limits[${twin}]: policy names within one limiter must be distinct (an unnamed policy is named from its numbers, so two identical ones collide); give one a \`name\``,
      )
    if (chosen) claimed.push(name)
    policies.push(Object.freeze({ ...policy, name }))
    namespaces.push(storeNamespace(base, name, policy.algorithm, chosen))
  })
  const set = setOf(withDelays(policies, options, true), namespaces, limiterName)
  for (const p of set.policies)
    if (claimed.includes(p.name)) claimName(store, base, p.name, p.algorithm, set.policies)
  return set
}

function checkedSpecs(limits: unknown): readonly unknown[] {
  const expected = `an array of 1 to ${MAX_LIMITS} policies ({ limit, window, algorithm?, burst?, name? })`
  if (!Array.isArray(limits)) throw new LimiterTypeError('limits', limits, expected)
  if (limits.length < 1 || limits.length > MAX_LIMITS)
    throw new LimiterRangeError(
      'limits',
      limits,
      `must hold 1 to ${MAX_LIMITS} policies (it holds ${limits.length})`,
    )
  return limits
}

function setOf(
  policies: readonly NamedPolicy[],
  namespaces: readonly string[],
  limiterName = '',
): PolicySet {
  return Object.freeze({
    policies: Object.freeze(policies),
    namespaces: Object.freeze(namespaces),
    maxCost: Math.min(...policies.map((p) => p.burst)),
    id: policies
      .map((p) => `${ALGORITHM_CODE[p.algorithm]}:${p.limit}:${p.windowMs}:${capacityArg(p)}`)
      .join('|'),
    name: limiterName !== '' ? limiterName : policies.map((p) => p.name).join('+'),
    leases: policies.some((p) => p.algorithm === 'concurrency'),
    reserve: policies.some((p) => p.ceilings !== undefined),
    waitMs: Math.max(0, ...policies.map((p) => Math.ceil((p.waitUnits ?? 0) / p.limit))),
  })
}

/** What one policy decided: the fields {@link combineDecisions} reads. */
export interface PolicyOutcome {
  readonly allowed: boolean
  readonly remaining: number
  readonly resetMs: number
  readonly retryAfterMs: number
}

/**
 * The limiter's decision from its policies' (in declaration order): admitted when every policy
 * admitted; `retryAfterMs` the longest wait among the refusing policies (waiting it out, each
 * of them passes, and time never takes room from the others); `limit`, `remaining` and
 * `resetMs` those of the most constraining policy (see `constrainingIndex`).
 */
export function combineDecisions(
  set: PolicySet,
  outcomes: readonly PolicyOutcome[],
): PolicyOutcome & { readonly limit: number } {
  let allowed = true
  let retryAfterMs = 0
  for (const o of outcomes) {
    if (o.allowed) continue
    allowed = false
    if (o.retryAfterMs > retryAfterMs) retryAfterMs = o.retryAfterMs
  }
  const i = constrainingIndex(outcomes)
  const tight = outcomes[i] as PolicyOutcome
  return {
    allowed,
    limit: (set.policies[i] as NamedPolicy).limit,
    remaining: tight.remaining,
    resetMs: tight.resetMs,
    retryAfterMs,
  }
}

/**
 * Whether a concurrency policy refused `decision`. Its Retry-After is an estimate (a release
 * frees a slot at any moment): such a refusal is polled, never cached.
 */
export function refusedByConcurrency(policies: readonly Policy[], decision: Decision): boolean {
  if (decision.allowed) return false
  if (policies.length === 1) return policies[0]?.algorithm === 'concurrency'
  return decision.policies.some((p, i) => !p.allowed && policies[i]?.algorithm === 'concurrency')
}

/**
 * How long the blocked-key cache may answer `decision`, a refusal of a request of `need`: until
 * its Retry-After, less the set's wait allowance (a request that waits passes sooner), and no
 * longer than its `remaining` stays 0. The two part only for a cost above 1 or under waiting:
 * then a gcra-family policy has room again `resetMs` less `burst - 1` emission intervals from
 * now, and a window algorithm's refusal is not cached (its room comes back gradually).
 */
export function trustedMs(set: PolicySet, decision: Decision, need: number): number {
  let trusted = decision.retryAfterMs - set.waitMs
  if (need <= 1 && set.waitMs === 0) return trusted
  set.policies.forEach((p, i) => {
    const entry = decision.policies[i]
    if (entry === undefined || entry.remaining > 0) return
    const back = RESERVING.has(p.algorithm)
      ? entry.resetMs - 1 - Math.ceil(((p.burst - 1) * p.windowMs) / p.limit)
      : 0
    if (back < trusted) trusted = back
  })
  return trusted
}
