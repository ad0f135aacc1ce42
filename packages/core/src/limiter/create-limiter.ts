// createLimiter(): consume / peek / reset / refund over a store, with a deadline and failure policy.

import { nowMs } from '../common/clock.js'
import { LimiterTypeError } from '../common/errors.js'
import { type Decision, isUncounted, LimiterDecision } from '../decision/decision.js'
import {
  DecisionWatch,
  decisionChannel,
  publishCircuit,
  publishedDecide,
  publishFailure,
  toldOne,
  WATCH,
} from '../observability/events.js'
import type { PolicySet } from '../policies/limits.js'
import { isCost } from '../policies/policy.js'
import { checkKey } from '../stores/redis-keys.js'
import { acquire, runInSlot, Wakers } from './acquire.js'
import { blockerOf } from './blocks.js'
import { decideWith } from './consume-options.js'
import { costError } from './cost.js'
import { decisionsFor } from './decisions.js'
import { owedOf } from './owed.js'
import { type Report, storePathOf } from './paths.js'
import { withReserve } from './reserve.js'
import { type LimiterSettings, limiterSettings } from './settings.js'
import type { Decide, Limiter, LimiterOptions } from './types.js'

export type {
  AcquireOptions,
  ConsumeOptions,
  ErrorContext,
  FailureMode,
  Limiter,
  LimiterOptions,
} from './types.js'

/**
 * Internal: a limiter's consume that answers synchronously when its store can (a Decision, or a
 * promise of one; bad input throws). The HTTP glue uses it to skip promise hops per request.
 */
export const DECIDE: unique symbol = Symbol('@limiter/core.decide') as never

/**
 * Counts `cost` against `key`: synchronously when the limiter's store allows, else a promise.
 * `rank`: the request's priority rank, already validated (`undefined`: normal).
 */
export function decideNow(
  limiter: Limiter,
  key: string,
  cost: number,
  rank?: number,
): Decision | Promise<Decision> {
  const decide = (limiter as { [DECIDE]?: Decide })[DECIDE]
  if (decide !== undefined) return decide(key, cost, rank)
  return rank === undefined
    ? limiter.consume(key, cost)
    : limiter.consume(key, cost, { priority: rank })
}

/** The largest cost `limiter` can ever admit: the smallest `burst` of its policies. */
export function maxCostOf(limiter: Limiter): number {
  let most = Number.POSITIVE_INFINITY
  for (const p of limiter.policies) if (p.burst < most) most = p.burst
  return most
}

// `run()` as a promise: what it returns (a value, or a promise), or what it throws as a rejection.
function settled<T>(run: () => T | Promise<T>): Promise<T> {
  try {
    const value = run()
    return value instanceof Promise ? value : Promise.resolve(value)
  } catch (error) {
    return Promise.reject(error)
  }
}

// Validates a cost: an integer from `min` (0 peeks) to the smallest burst, the most that can pass
// (acquire checks the same, with costError, and the ceiling of the caller's class besides).
function costChecker(set: PolicySet): (cost: unknown, min: 0 | 1) => number {
  const { maxCost } = set
  const count = set.policies.length
  return (cost, min) => {
    if (isCost(cost, min, maxCost)) return cost
    throw costError(cost, min, maxCost, count)
  }
}

/**
 * A limiter's report of a store failure: to its `onError` (a throwing hook cannot turn a decision
 * into a crash), then on `limiter:failure`. `limiterOf` gives the limiter once it exists.
 */
function failureReporter(settings: LimiterSettings, limiterOf: () => Limiter): Report {
  const { onError, failureMode } = settings
  return (error, key, circuitOpen = false, operation = 'decide') => {
    // Skipped calls are the consequence of failures already reported, not new ones.
    if (error.code === 'ERR_LIMITER_CIRCUIT_OPEN') return
    const limiter = limiterOf()
    try {
      const returned: unknown = onError(error, { key, limiter, failureMode, operation })
      // an async hook (shipping the error to a log service) that rejects must not crash either
      if (typeof (returned as PromiseLike<unknown> | undefined)?.then === 'function')
        Promise.resolve(returned).catch(() => {})
    } catch {
      // A throwing hook must not turn a decision into a crash.
    }
    publishFailure(limiter, key, error, circuitOpen)
  }
}

/**
 * A limiter's give-backs: `refund` and `release`, which wake one of this process's waiters for
 * the key per slot freed (an admission that finds more free wakes more), and `close`, which
 * waits for those still in flight.
 */
function giveBacks(
  settings: LimiterSettings,
  path: ReturnType<typeof storePathOf>,
  decisions: ReturnType<typeof decisionsFor>,
  wakers: Wakers,
  checkCost: ReturnType<typeof costChecker>,
): Pick<Limiter, 'refund' | 'release' | 'close'> {
  const { set } = settings
  const owed = owedOf()
  const ticketOf = (decision: Decision | undefined) =>
    decision === undefined ? undefined : LimiterDecision.ticketOf(decision, decisions.owner)
  const woken =
    (key: string, slots = 1) =>
    (done: Promise<void>) =>
      owed.track(set.leases ? done.then(() => wakers.wake(key, slots)) : done)
  return {
    refund: (key, cost = 1, decision = undefined) =>
      settled(() => {
        checkKey(key)
        checkCost(cost, 1)
        checkDecision(decision)
        // a refusal, or an answer of failureMode, counted nothing: there is nothing to give back
        if (decision !== undefined && (!decision.allowed || isUncounted(decision))) return
        return woken(key, cost)(path.refund(key, cost, ticketOf(decision), decision?.source))
      }),
    release: (key, decision) =>
      settled(() => {
        checkKey(key)
        checkDecision(decision)
        const ticket = set.leases ? ticketOf(decision) : undefined
        return ticket === undefined
          ? undefined
          : woken(key)(path.release(key, ticket, decision.source))
      }),
    close: () => owed.settled(),
  }
}

// A refund's or release's decision: undefined, or an object (a Decision of this limiter; any
// other object is one it did not make, and gives back what a refund without one does).
function checkDecision(decision: unknown): void {
  if (decision !== undefined && (decision === null || typeof decision !== 'object'))
    throw new LimiterTypeError(
      'decision',
      decision,
      'the Decision this limiter returned, or undefined',
    )
}

// consume's decision, answered synchronously when the store can (MemoryStore); bad input throws.
function deciderOf(
  settings: ReturnType<typeof limiterSettings>,
  path: ReturnType<typeof storePathOf>,
  checkCost: ReturnType<typeof costChecker>,
  limiterOf: () => Limiter,
  watch: DecisionWatch,
): Decide {
  const { set } = settings
  // a fleet reserve's refusals marked `reason: 'reserve'` (a limiter with one)
  const decideIn = withReserve(set, path.decide)
  // the common consume (cost 1, no priority) on its own path, where the store has one and no
  // fleet reserve marks refusals
  const one = set.reserve ? undefined : path.one
  // the same decisions, told to `watch`'s observers and published on `limiter:decision`: used
  // only while either listens
  const published = publishedDecide(
    limiterOf,
    settings.store,
    settings.mode === 'shadow',
    decideIn,
    one,
    settings.clock,
    watch,
  )
  const clock = settings.clock ?? nowMs
  return (key, cost, rank, waitMs) => {
    checkKey(key)
    if (cost !== 1 || one === undefined) checkCost(cost, 0)
    if (decisionChannel.hasSubscribers) return published(key, cost, rank, waitMs)
    const { observer } = watch
    if (cost === 1 && rank === undefined && waitMs === undefined && one !== undefined)
      // observers alone (the inspector's) are told here, without the published path's steps
      return observer === undefined ? one(key, undefined) : toldOne(one, observer, clock, key)
    return observer === undefined
      ? decideIn(key, cost, rank, waitMs)
      : published(key, cost, rank, waitMs)
  }
}

// consume: a decision, or the store's promise of one, as a promise, with no closure per call
// (settled's).
function consumer(decide: Decide): Limiter['consume'] {
  // The latest refusal handed out and its settled promise: a refusal the decisions repeat (the
  // same frozen object, for a hot key refused within one ms) is answered with that promise
  // again, with no new promise per request (~70 of ~1,100 instructions a refused decision,
  // bench/src/memory-instructions.mjs with --clock). One slot: nothing grows.
  let refused: Decision | undefined
  let settled: Promise<Decision> | undefined
  return (key, cost = 1, options = undefined) => {
    try {
      const decision =
        options === undefined ? decide(key, cost) : decideWith(decide, key, cost, options)
      if (decision === refused) return settled as Promise<Decision>
      // Reading a field first shows V8's optimizing compiler the decision's shape: it then
      // resolves the promise with it directly, without the generic lookup of a `then` method
      // on it (~400 instructions per decision, bench/src/memory-instructions.mjs). A store's
      // promise (no such field) is returned as it is, as Promise.resolve would.
      if ((decision as Partial<Decision>).allowed !== false) return Promise.resolve(decision)
      refused = decision as Decision
      settled = Promise.resolve(refused)
      return settled
    } catch (error) {
      return Promise.reject(error)
    }
  }
}

/**
 * Creates a limiter. Options are validated here: a bad one throws a `TypeError`/`RangeError`
 * naming it.
 *
 * @example
 * const limiter = createLimiter({ algorithm: 'gcra', limit: 100, window: '1m' })
 * const { allowed, retryAfterMs } = await limiter.consume(`user:${id}`)
 * // several limits on one key, all or nothing:
 * const api = createLimiter({ limits: [
 *   { name: 'burst', limit: 10, window: '1s', algorithm: 'gcra', burst: 20 },
 *   { name: 'daily', limit: 1000, window: '1d', algorithm: 'fixed-window' },
 * ] })
 */
export function createLimiter(options: LimiterOptions): Limiter {
  // every option resolved here, once: the rest reads only `settings`
  const settings = limiterSettings(options)
  const { set } = settings
  const decisions = decisionsFor(set)
  const report = failureReporter(settings, () => limiter)
  const path = storePathOf(settings, decisions, report, (domain, state) =>
    publishCircuit(limiter, domain, state),
  )
  const shadow = settings.mode === 'shadow'
  const checkCost = costChecker(set)
  // the in-process observers of its decisions (observeDecisions, for the inspector)
  const watch = new DecisionWatch()
  const decide = deciderOf(settings, path, checkCost, () => limiter, watch)
  const blocker = blockerOf(settings, path, () => limiter)
  // acquire's waiters for a concurrency slot, in line per key, woken by a release here
  const wakers = new Wakers()

  const limiter: Limiter & { [DECIDE]: typeof decide; [WATCH]: DecisionWatch } = {
    [DECIDE]: decide,
    [WATCH]: watch,
    policy: settings.policy,
    policies: set.policies,
    name: settings.name,
    prefix: settings.prefix,
    mode: settings.mode,
    consume: consumer(decide),
    peek: (key, options) => limiter.consume(key, 0, options),
    reset: (key) =>
      settled(() => {
        checkKey(key)
        return path.reset(key)
      }),
    ...giveBacks(settings, path, decisions, wakers, checkCost),
    block: (key, duration) =>
      settled(() => {
        checkKey(key)
        return blocker.block(key, duration)
      }),
    penalize: (key, cost = 1) =>
      settled(() => {
        checkKey(key)
        return blocker.penalize(key, cost)
      }),
    acquire: (key, options) => acquire(limiter, wakers, settings.waiting, key, options, shadow),
    run: (key, fn, options) => runInSlot(limiter, key, fn, options),
  }
  return Object.freeze(limiter)
}
