// limiter.block and limiter.penalize: their validation, and what each store path does for them
// (MemoryStore, a custom in-process store, a remote store under the guard).

import { monotonicMs } from '../common/clock.js'
import { type Duration, parseDuration, warnBareMilliseconds } from '../common/duration.js'
import { LimiterError, LimiterRangeError } from '../common/errors.js'
import { type Decision, isUncounted } from '../decision/decision.js'
import { blockChannel, publishBlock } from '../observability/events.js'
import type { MemoryStore } from '../stores/memory-store.js'
import {
  type Store,
  type StoreCall,
  type StoreSink,
  SUBMIT,
  type SubmittingStore,
} from '../stores/store.js'
import { type BlockedCache, remembering } from './blocked-cache.js'
import { type Decisions, storeAnswers } from './decisions.js'
import type { Guard, Handlers } from './guard.js'
import type { LimiterSettings } from './settings.js'
import type { Limiter } from './types.js'

/** The longest block: a year (a longer ban belongs in a deny list, not a rate limiter). */
export const MAX_BLOCK_MS = 365 * 86_400_000

/** The largest penalty: a sliding-log total is held in 4 bytes on Redis. */
export const MAX_PENALTY = 2 ** 32 - 1

/** What a store path does for `block` and `penalize` (key, duration and cost validated). */
export interface BlockPath {
  block(key: string, durationMs: number): Promise<void>
  penalize(key: string, cost: number): Promise<Decision>
}

/**
 * The validated `block` and `penalize` of a limiter over `path`, each published on
 * `limiter:block` once it resolves.
 */
export function blockerOf(
  settings: LimiterSettings,
  path: BlockPath,
  limiter: () => Limiter,
): {
  block(key: string, duration: Duration): Promise<void>
  penalize(key: string, cost: number): Promise<Decision>
} {
  const leasesOnly = settings.set.policies.every((p) => p.algorithm === 'concurrency')
  return {
    block(key, duration) {
      const ms = parseDuration(duration, 'duration', MAX_BLOCK_MS)
      warnBareMilliseconds(duration, 'limiter.block')
      const done = path.block(key, ms)
      if (!blockChannel.hasSubscribers) return done
      return done.then(() => publishBlock(limiter(), key, ms, 0, undefined))
    },
    penalize(key, cost) {
      if (leasesOnly)
        throw new LimiterError(
          'ERR_LIMITER_UNSUPPORTED',
          'penalize: this limiter has only concurrency policies, and a penalty is not a lease (penalize counts against rate policies)',
        )
      if (typeof cost !== 'number' || !Number.isInteger(cost) || cost < 1 || cost > MAX_PENALTY)
        throw new LimiterRangeError(
          'cost',
          cost,
          `must be an integer from 1 to ${MAX_PENALTY}`,
          'ERR_LIMITER_COST',
        )
      const decided = path.penalize(key, cost)
      if (!blockChannel.hasSubscribers) return decided
      return decided.then((decision) => {
        // a penalty the store never took (failureMode answered) is not one
        if (!isUncounted(decision))
          publishBlock(limiter(), key, decision.retryAfterMs, cost, decision)
        return decision
      })
    },
  }
}

// The error of a store that lacks what `method` needs.
function unsupported(store: Store, method: 'block' | 'penalize'): LimiterError {
  const name = (store as { constructor?: { name?: unknown } }).constructor?.name
  const which = typeof name === 'string' && name !== '' && name !== 'Object' ? name : 'custom'
  return new LimiterError(
    'ERR_LIMITER_UNSUPPORTED',
    `limiter.${method} needs a store with a ${method}() method: this ${which} store has none`,
  )
}

type CallOf = (key: string, cost: number) => StoreCall

/** `block` and `penalize` on a MemoryStore: synchronous, no failure policy. */
export function memoryBlocks(store: MemoryStore, call: CallOf, decisions: Decisions): BlockPath {
  return {
    block: (key, ms) => store.block(call(key, 0), ms).then(() => undefined),
    penalize: (key, cost) =>
      Promise.resolve(decisions.of(store.penalizeSync(call(key, cost)), 'store')),
  }
}

/** How a path falls back when its store fails (see paths.ts' failure policy). */
export interface Fallback {
  /** The decision for a failed call under `failureMode` (reported first). */
  failed(cause: unknown, call: StoreCall): Decision | Promise<Decision>
  /** Reports a store failure (to `onError`); returns it as a LimiterError with the address. */
  report(cause: unknown, key: string): LimiterError
  /** `failureMode: 'local'`'s process-local store (made on first use); undefined otherwise. */
  local(): MemoryStore | undefined
}

// A penalty the store could not take: reported, then `failureMode` (a local store penalizes).
function penaltyFailed(
  fallback: Fallback,
  decisions: Decisions,
  error: unknown,
  c: StoreCall,
): Decision | Promise<Decision> {
  const local = fallback.local()
  if (local === undefined) return fallback.failed(error, c)
  fallback.report(error, c.key)
  return decisions.of(local.penalizeSync(c), 'local')
}

/** `block` and `penalize` on a custom in-process store: its promises, no deadline. */
export function localBlocks(
  store: Store,
  call: CallOf,
  decisions: Decisions,
  fallback: Fallback,
): BlockPath {
  return {
    block(key, ms) {
      if (store.block === undefined) return Promise.reject(unsupported(store, 'block'))
      const c = call(key, 0)
      void fallback.local()?.block(c, ms)
      return store.block(c, ms).then(
        () => undefined,
        (error: unknown) => Promise.reject(fallback.report(error, key)),
      )
    },
    penalize(key, cost) {
      if (store.penalize === undefined) return Promise.reject(unsupported(store, 'penalize'))
      const c = call(key, cost)
      return store.penalize(c).then(
        (d) => decisions.of(d, 'store'),
        (error: unknown) => penaltyFailed(fallback, decisions, error, c),
      )
    },
  }
}

/** What a remote path shares with its `block` and `penalize`. */
export interface RemoteContext {
  readonly settings: LimiterSettings
  readonly decisions: Decisions
  readonly fallback: Fallback
  readonly guard: Guard
  readonly call: CallOf
  readonly domainOf: (c: StoreCall) => string
  readonly blocked: BlockedCache | undefined
}

/**
 * `block` and `penalize` on a remote store, under the guard's deadline and circuit breaker. With
 * `failureMode: 'local'` a block goes into the local store too (best effort: it decides only
 * while the store fails). The blocked-key cache learns a block from the store's refusals, as it
 * learns any refusal (never from `block` itself: only the store knows whether a policy's own
 * wait outlasts the block, and a cached Retry-After must be the store's). A store failure
 * rejects `block`; `penalize` follows `failureMode`.
 */
export function remoteBlocks(x: RemoteContext): BlockPath {
  const { settings, decisions, fallback, guard, call, domainOf, blocked } = x
  const { store, set } = settings
  const submitting = SUBMIT in store ? (store as SubmittingStore) : undefined
  // A penalty's answer is a peek: a refusal is cached like a consume's, for a cost-1 request.
  const remembered = remembering(blocked, set)
  const remember = (c: StoreCall, decision: Decision, sentAtMs: number): Decision =>
    remembered(c.key, 1, sentAtMs, decision)
  const penalty: Handlers<Decision> = {
    submit:
      submitting === undefined
        ? (c, sink) => settle(store.penalize?.(c), sink)
        : (c, sink) => submitting[SUBMIT](c, 'p', sink),
    ...storeAnswers(decisions, remember),
    error: (c, error) => penaltyFailed(fallback, decisions, error, c),
  }
  return {
    block(key, ms) {
      if (store.block === undefined) return Promise.reject(unsupported(store, 'block'))
      const c = call(key, 0)
      void fallback.local()?.block(c, ms)
      // a refusal cached before the block, or decided before it and still on its way, would
      // answer with its own, shorter Retry-After
      blocked?.clear(key, c.nowMs ?? monotonicMs())
      return guard.run(c, domainOf(c), 0, {
        submit: (cc, sink) => settle(store.block?.(cc, ms), sink),
        value: () => undefined,
        error: (_, error) => Promise.reject(fallback.report(error, key)),
      })
    },
    penalize(key, cost) {
      if (submitting === undefined && store.penalize === undefined)
        return Promise.reject(unsupported(store, 'penalize'))
      const c = call(key, cost)
      return guard.run(c, domainOf(c), c.nowMs ?? monotonicMs(), penalty)
    },
  }
}

// Settles `sink` with a store method's promise (or a rejection when there is none).
function settle(promise: Promise<unknown> | undefined, sink: StoreSink): void {
  if (promise === undefined)
    sink.reject(new LimiterError('ERR_LIMITER_UNSUPPORTED', 'no store method'))
  else
    promise.then(
      (value) => sink.resolve(value),
      (error: unknown) => sink.reject(error),
    )
}
