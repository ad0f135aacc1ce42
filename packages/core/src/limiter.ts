// createLimiter(): consume / peek / reset / refund over a store, with a deadline and failure policy.
import { createBlockedCache } from './blocked-cache.js'
import { monotonicMs } from './clock.js'
import { type Decision, type DecisionSource, LimiterDecision } from './decision.js'
import { LimiterError, LimiterRangeError } from './errors.js'
import { asLimiterError, defaultOnError, FAILURES } from './failure.js'
import { createGuard, type Handlers } from './guard.js'
import { limiterSettings } from './limiter-options.js'
import type { Limiter, LimiterOptions } from './limiter-types.js'
import { isCost } from './policy.js'
import { BIND, MemoryStore } from './stores/memory-store.js'
import { checkKey } from './stores/redis-keys.js'
import {
  type StoreCall,
  type StoreDecision,
  type StoreSink,
  SUBMIT,
  type SubmittingStore,
} from './stores/store.js'

export type { ErrorContext, FailureMode, Limiter, LimiterOptions } from './limiter-types.js'

/**
 * Internal: a limiter's consume that answers synchronously when its store can (a Decision, or a
 * promise of one; bad input throws). The HTTP glue uses it to skip promise hops per request.
 */
export const DECIDE: unique symbol = Symbol('@limiter/core.decide') as never

/** Counts `cost` against `key`: synchronously when the limiter's store allows, else a promise. */
export function decideNow(
  limiter: Limiter,
  key: string,
  cost: number,
): Decision | Promise<Decision> {
  const decide = (
    limiter as { [DECIDE]?: (key: string, cost: number) => Decision | Promise<Decision> }
  )[DECIDE]
  return decide === undefined ? limiter.consume(key, cost) : decide(key, cost)
}

/**
 * Creates a limiter. Options are validated here: a bad one throws a `TypeError`/`RangeError`
 * naming it.
 *
 * @example
 * const limiter = createLimiter({ algorithm: 'gcra', limit: 100, window: '1m' })
 * const { allowed, retryAfterMs } = await limiter.consume(`user:${id}`)
 */
export function createLimiter(options: LimiterOptions): Limiter {
  const settings = limiterSettings(options)
  const { policy, store, name, prefix, namespace, timeoutMs, failureMode, breaker, clock } =
    settings
  const blocked =
    store.local === true || settings.blocked.maxKeys === 0
      ? undefined
      : createBlockedCache(settings.blocked)
  const onError = options.onError ?? defaultOnError()
  let fallback: MemoryStore | undefined

  const call = (key: string, cost: number, ticket?: string): StoreCall => ({
    policy,
    namespace,
    key,
    cost,
    ticket,
    nowMs: clock?.(),
  })

  // The Decision a caller gets; it carries sliding-log's ticket, unseen, for an exact refund.
  const owner = {}
  const decisionOf = (
    allowed: boolean,
    remaining: number,
    resetMs: number,
    retryAfterMs: number,
    ticket: string | undefined,
    source: DecisionSource,
  ): Decision =>
    new LimiterDecision(
      owner,
      allowed,
      policy.limit,
      remaining,
      resetMs,
      retryAfterMs,
      ticket,
      source,
    )
  const fromStore = (d: StoreDecision): Decision =>
    decisionOf(d.allowed, d.remaining, d.resetMs, d.retryAfterMs, d.ticket, 'store')
  const fromFallback = (d: StoreDecision): Decision =>
    decisionOf(d.allowed, d.remaining, d.resetMs, d.retryAfterMs, d.ticket, 'local')

  // A store failure, with where the store is when the error does not say already.
  const storeFailure = (cause: unknown): LimiterError => {
    const error = asLimiterError(cause)
    const address = (store as { address?: unknown }).address
    if (error.address !== undefined || typeof address !== 'string') return error
    return new LimiterError(error.code, error.message, {
      cause: error.cause,
      address,
      clientError: error.clientError,
    })
  }

  const report = (error: LimiterError, key: string): void => {
    // Skipped calls are the consequence of failures already reported, not new ones.
    if (error.code === 'ERR_LIMITER_CIRCUIT_OPEN') return
    try {
      onError(error, { key, limiter, failureMode })
    } catch {
      // A throwing hook must not turn a decision into a crash.
    }
  }

  // The decision for a failed store call: from failureMode, marked (except a local fallback's
  // real decision) so adapters can tell "store down" from "over the limit".
  const failed = (cause: unknown, key: string, c: StoreCall): Decision | Promise<Decision> => {
    const error = storeFailure(cause)
    report(error, key)
    if (failureMode === 'local') {
      fallback ??= new MemoryStore()
      return fallback.consume(c).then(fromFallback)
    }
    const decision =
      failureMode === 'open'
        ? decisionOf(true, policy.limit, 0, 0, undefined, 'fail-open')
        : decisionOf(false, 0, 1000, 1000, undefined, 'fail-closed')
    FAILURES.set(decision, error)
    return decision
  }

  const guard = store.local === true ? undefined : createGuard(timeoutMs, breaker)
  // An in-process store that can answer synchronously skips a promise hop per decision.
  const consumeSync = store instanceof MemoryStore ? store[BIND](namespace, policy) : undefined
  // Each failure domain of the store (a Cluster node) has its own circuit: a dead node only
  // sends its own keys to failureMode.
  const domainOf = (c: StoreCall): string => store.failureDomain?.(c) ?? ''
  // A store with the internal entry point settles the guard's entry itself; any other store's
  // promise is bridged to it.
  const submitting = SUBMIT in store ? (store as SubmittingStore) : undefined
  const bridge =
    (run: (c: StoreCall) => Promise<unknown>) =>
    (c: StoreCall, sink: StoreSink): void => {
      run(c).then(
        (value) => sink.resolve(value),
        (error: unknown) => sink.reject(error),
      )
    }
  // A store's answer to a consume, as the Decision the caller gets (and the blocked cache keeps).
  const decided: NonNullable<Handlers<Decision>['decided']> = (
    c,
    allowed,
    remaining,
    resetMs,
    retryAfterMs,
    ticket,
    sentAtMs,
  ) => {
    const decision = decisionOf(allowed, remaining, resetMs, retryAfterMs, ticket, 'store')
    if (blocked !== undefined && !allowed)
      blocked.add(c.key, c.cost === 0 ? 1 : c.cost, sentAtMs, decision)
    return decision
  }
  const consumeHandlers: Handlers<Decision> = {
    submit:
      submitting === undefined
        ? bridge((c) => store.consume(c))
        : (c, sink) => submitting[SUBMIT](c, 'c', sink),
    value(c, value, sentAtMs) {
      const d = value as StoreDecision
      return decided(c, d.allowed, d.remaining, d.resetMs, d.retryAfterMs, d.ticket, sentAtMs)
    },
    decided,
    error: (c, error) => failed(error, c.key, c),
  }
  const reported = (c: StoreCall, error: unknown): undefined => {
    report(storeFailure(error), c.key)
    return undefined
  }
  const refundHandlers: Handlers<void> = {
    submit:
      submitting === undefined
        ? bridge((c) => store.refund(c))
        : (c, sink) => submitting[SUBMIT](c, 'r', sink),
    value: () => undefined,
    error: reported,
  }
  const resetHandlers: Handlers<void> = {
    submit: bridge((c) => store.reset(c)),
    value: () => undefined,
    error: reported,
  }

  const checkCost = (cost: unknown, min: 0 | 1): number => {
    if (isCost(cost, min, policy.burst)) return cost
    const why =
      typeof cost === 'number' && Number.isInteger(cost) && cost > policy.burst
        ? `can never be admitted: it exceeds the policy's burst (${policy.burst})`
        : `must be an integer >= ${min}`
    throw new LimiterRangeError('cost', cost, why, 'ERR_LIMITER_COST')
  }

  // consume, answered synchronously when the store can (MemoryStore); bad input throws.
  const decide = (key: string, cost: number): Decision | Promise<Decision> => {
    checkKey(key)
    checkCost(cost, 0)
    if (consumeSync !== undefined) return fromStore(consumeSync(key, cost, clock?.()))
    const c = call(key, cost)
    if (guard === undefined) {
      return store.consume(c).then(fromStore, (error: unknown) => failed(error, key, c))
    }
    let sentAtMs = 0
    if (blocked !== undefined) {
      sentAtMs = c.nowMs ?? monotonicMs()
      const hit = blocked.get(key, cost === 0 ? 1 : cost, sentAtMs, policy.limit)
      if (hit !== undefined) return hit
    }
    return guard.run(c, domainOf(c), sentAtMs, consumeHandlers)
  }

  const limiter: Limiter & { [DECIDE]: typeof decide } = {
    [DECIDE]: decide,
    policy,
    name,
    prefix,
    consume(key, cost = 1) {
      try {
        const decision = decide(key, cost)
        return decision instanceof Promise ? decision : Promise.resolve(decision)
      } catch (error) {
        return Promise.reject(error)
      }
    },
    peek(key) {
      return limiter.consume(key, 0)
    },
    reset(key) {
      try {
        checkKey(key)
      } catch (error) {
        return Promise.reject(error)
      }
      blocked?.delete(key)
      const c = call(key, 0)
      if (guard === undefined)
        return store.reset(c).catch((error: unknown) => report(storeFailure(error), key))
      return guard.run(c, domainOf(c), 0, resetHandlers)
    },
    refund(key, cost = 1, decision) {
      try {
        checkKey(key)
        checkCost(cost, 1)
      } catch (error) {
        return Promise.reject(error)
      }
      blocked?.delete(key)
      const ticket = decision === undefined ? undefined : LimiterDecision.ticketOf(decision, owner)
      const c = call(key, cost, ticket)
      if (guard === undefined)
        return store.refund(c).catch((error: unknown) => report(storeFailure(error), key))
      return guard.run(c, domainOf(c), 0, refundHandlers)
    },
  }
  return Object.freeze(limiter)
}
