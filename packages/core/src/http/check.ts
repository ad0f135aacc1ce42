// The request check every adapter runs: skip, key, cost and consume, synchronously when it can be.
export { invoke, isThenable, type MaybePromise, misbehaved } from './callbacks.js'

import { nowMs } from '../common/clock.js'
import { describeValue } from '../common/errors.js'
import type { Decision } from '../decision/decision.js'
import { decideNow, maxCostOf } from '../limiter/create-limiter.js'
import { isCost } from '../policies/policy.js'
import { type Priority, priorityRank } from '../shed/priority.js'
import { invoke, isThenable, type MaybePromise, misbehaved } from './callbacks.js'
import { formatHeaders } from './headers.js'
import type { LimitSet } from './limit-sets.js'
import type { ResolvedRateLimit } from './options.js'
import { shedCheck, withAdmission } from './shed.js'
import type { CheckResult, RateLimitCheck } from './types.js'

/**
 * Runs the shared flow for one request: `skip`, then `key` and `cost` (a callback that throws or
 * returns a bad value rejects with a `LimiterError` naming the option), then `consume`. Resolves
 * `undefined` when the request is skipped. `scope` is the adapter's route scope (method and route
 * pattern, or mount path; `''` for none): for a limiter with the default name it separates
 * counters per route.
 *
 * @example
 * const check = await checkRequest(rl, req, routeKey(req.method, pattern))
 */
export async function checkRequest<Req>(
  rl: ResolvedRateLimit<Req, unknown>,
  req: Req,
  scope = '',
): Promise<CheckResult> {
  return beginCheck(rl, req, scope)
}

/**
 * {@link checkRequest} without the promise when it is not needed: with synchronous (or no)
 * `skip`, `key` and `cost` callbacks and an in-process store, the check is returned directly,
 * so an adapter can go on in the same turn; otherwise a promise of it. A synchronous callback's
 * failure throws (the adapter passes it on as it would a rejection).
 */
export function beginCheck<Req>(
  rl: ResolvedRateLimit<Req, unknown>,
  req: Req,
  scope = '',
): MaybePromise<CheckResult> {
  const { deny } = rl
  if (deny === undefined) return skipStep(rl, req, scope)
  const denied = invoke('deny', 'ERR_LIMITER_OPTION', () => deny(req))
  if (isThenable(denied))
    return Promise.resolve(denied).then((yes) => (yes ? rl.denied : skipStep(rl, req, scope)))
  // any truthy value denies, as any truthy value skips: a deny list's row or a Map's entry
  return denied ? rl.denied : skipStep(rl, req, scope)
}

function skipStep<Req>(
  rl: ResolvedRateLimit<Req, unknown>,
  req: Req,
  scope: string,
): MaybePromise<RateLimitCheck | undefined> {
  const { skip } = rl
  if (skip === undefined) return keyStep(rl, req, scope)
  const skipped = invoke('skip', 'ERR_LIMITER_OPTION', () => skip(req))
  if (isThenable(skipped)) return skipped.then((yes) => (yes ? undefined : keyStep(rl, req, scope)))
  return skipped ? undefined : keyStep(rl, req, scope)
}

/**
 * Runs {@link beginCheck} and passes its outcome on, in the same turn when every step was
 * synchronous: `onCheck(check)` with the check (`undefined` when skipped), or `onError(error)`
 * for a failing callback; after an asynchronous step, the same through a promise. The one branch
 * every adapter needs around `beginCheck`.
 *
 * @example
 * withCheck(rl, req, scope, (check) => settle(req, res, next, check), next)
 */
export function withCheck<Req, R>(
  rl: ResolvedRateLimit<Req, unknown>,
  req: Req,
  scope: string,
  onCheck: (check: CheckResult) => R,
  onError: (error: unknown) => R,
): R | Promise<R> {
  let check: MaybePromise<CheckResult>
  try {
    check = beginCheck(rl, req, scope)
  } catch (error) {
    return onError(error)
  }
  return isThenable(check) ? Promise.resolve(check).then(onCheck, onError) : onCheck(check)
}

function keyStep<Req>(
  rl: ResolvedRateLimit<Req, unknown>,
  req: Req,
  scope: string,
): MaybePromise<RateLimitCheck> {
  const userKey = rl.defaultKey ? rl.key(req) : invoke('key', 'ERR_LIMITER_KEY', () => rl.key(req))
  if (isThenable(userKey))
    return Promise.resolve(userKey).then((k) => limitsStep(rl, req, scope, k))
  return limitsStep(rl, req, scope, userKey)
}

// The limiter this request is checked against: the fixed one, or what `limits` chooses for it.
function limitsStep<Req>(
  rl: ResolvedRateLimit<Req, unknown>,
  req: Req,
  scope: string,
  userKey: unknown,
): MaybePromise<RateLimitCheck> {
  const key = keyText(userKey)
  rl.watch?.(req, key)
  const { limits } = rl
  if (typeof limits !== 'function') return costStep(rl, req, scope, key, limits)
  const set = limits(req)
  if (isThenable(set)) return Promise.resolve(set).then((s) => costStep(rl, req, scope, key, s))
  return costStep(rl, req, scope, key, set)
}

function costStep<Req>(
  rl: ResolvedRateLimit<Req, unknown>,
  req: Req,
  scope: string,
  key: string,
  set: LimitSet,
): MaybePromise<RateLimitCheck> {
  const { cost } = rl
  if (typeof cost !== 'function')
    return priorityStep(rl, req, set, scope, key, checkedCost(set, cost))
  const value: unknown = invoke('cost', 'ERR_LIMITER_COST', () => cost(req))
  if (isThenable(value))
    return Promise.resolve(value).then((v) =>
      priorityStep(rl, req, set, scope, key, checkedCost(set, v)),
    )
  return priorityStep(rl, req, set, scope, key, checkedCost(set, value))
}

// The request's priority rank (the `priority` option: fixed, or a callback), then its consume.
function priorityStep<Req>(
  rl: ResolvedRateLimit<Req, unknown>,
  req: Req,
  set: LimitSet,
  scope: string,
  key: string,
  cost: number,
): MaybePromise<RateLimitCheck> {
  const { priority } = rl
  if (typeof priority !== 'function') return shedStep(rl, set, scope, key, cost, priority)
  const value = invoke('priority', 'ERR_LIMITER_OPTION', () => priority(req))
  if (isThenable(value))
    return Promise.resolve(value).then((v) => shedStep(rl, set, scope, key, cost, rankOf(v)))
  return shedStep(rl, set, scope, key, cost, rankOf(value))
}

// A priority callback's value as its rank, or a LimiterError naming the option.
function rankOf(value: unknown): number {
  try {
    return priorityRank(value as Priority)
  } catch (error) {
    throw misbehaved(
      'priority',
      `returned ${describeValue(value, true)} (expected 'critical', 'high', 'normal', 'low' or a whole number rank)`,
      'ERR_LIMITER_OPTION',
      error,
    )
  }
}

// The `shed` option's shedder, before the limiter counts anything: a shed request spends no
// client budget.
function shedStep(
  rl: ResolvedRateLimit<never, unknown>,
  set: LimitSet,
  scope: string,
  key: string,
  cost: number,
  rank: number | undefined,
): MaybePromise<RateLimitCheck> {
  const { shed } = rl
  if (shed === undefined) return consumeStep(rl, set, scope, key, cost, rank)
  const admission = shed.admit(rank)
  if (!admission.admitted) return shedCheck(set, key, admission)
  return withAdmission(admission, () => consumeStep(rl, set, scope, key, cost, rank))
}

// A key callback's value as the key: a non-empty string, or a finite number or bigint as its
// decimal string (a numeric user id is the most common key there is).
function keyText(value: unknown): string {
  if (typeof value === 'string' && value !== '') return value
  if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'bigint')
    return String(value)
  throw misbehaved(
    'key',
    `returned ${describeValue(value, true)} (expected a non-empty string, a finite number or a bigint)`,
    'ERR_LIMITER_KEY',
  )
}

// A cost within what the limiter can ever admit: a fixed cost was checked at construction
// against fixed limits, but limits chosen per request may admit less.
function checkedCost(set: LimitSet, value: unknown): number {
  const { limiter } = set
  const burst = limiter.policies.length === 1 ? limiter.policy.burst : maxCostOf(limiter)
  if (!isCost(value, 1, burst)) {
    throw misbehaved(
      'cost',
      `returned ${describeValue(value, true)} (expected an integer from 1 to burst, ${burst})`,
      'ERR_LIMITER_COST',
    )
  }
  return value
}

function consumeStep(
  rl: ResolvedRateLimit<never, unknown>,
  set: LimitSet,
  scope: string,
  userKey: string,
  cost: number,
  rank?: number,
): MaybePromise<RateLimitCheck> {
  rl.scopes?.(scope)
  const scoped = rl.scoped && scope !== ''
  // '#' never occurs in a route pattern or mount path, so scoped keys cannot collide.
  const key = scoped ? `${scope}#${userKey}` : userKey
  const decision = decideNow(set.limiter, key, cost, rank)
  if (isThenable(decision)) return decision.then((d) => checked(rl, set, key, cost, d))
  return checked(rl, set, key, cost, decision)
}

function checked(
  rl: ResolvedRateLimit<never, unknown>,
  set: LimitSet,
  key: string,
  cost: number,
  decision: Decision,
): RateLimitCheck {
  const policy = set.headerPolicy
  const { shadow } = set
  return {
    decision,
    limiter: set.limiter,
    leases: set.leases,
    key,
    cost,
    policy,
    // clients must not react to a policy that is not enforced
    headers: shadow ? [] : formatHeaders(rl.headers, policy, decision, nowMs),
    shadow,
  }
}
