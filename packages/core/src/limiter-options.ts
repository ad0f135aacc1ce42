// createLimiter's options: their types, and their validation at construction.
import { CLOCK } from './clock.js'
import { type Duration, parseDuration } from './duration.js'
import { type LimiterError, LimiterRangeError, LimiterTypeError } from './errors.js'
import { parseBreaker } from './failure.js'
import type { BreakerOptions } from './guard.js'
import type { Limiter } from './limiter.js'
import { checkName, defaultName } from './naming.js'
import { definePolicy, type Policy, type PolicyOptions } from './policy.js'
import { MemoryStore } from './stores/memory-store.js'
import { isStore, type Store } from './stores/store.js'

/** What the limiter does when its store fails or misses the deadline. */
export type FailureMode = 'open' | 'closed' | 'local'

/** What `onError` receives besides the error. */
export interface ErrorContext {
  readonly key: string
  readonly limiter: Limiter
  /** What the limiter does about the failure: its `failureMode`. */
  readonly failureMode: FailureMode
}

/** Options for {@link createLimiter}. */
export interface LimiterOptions extends PolicyOptions {
  /** Where state lives. Default: a new `MemoryStore`. */
  readonly store?: Store | undefined
  /**
   * Names this limiter's counters. Limiters with the same `prefix` and `name` share counters.
   * Default: derived from the policy (e.g. `sw100/1m`), so the same definition in many
   * processes shares one counter. Set it to keep counters across a change of limit.
   */
  readonly name?: string | undefined
  /** Prepended to every key (default `'rl:'`). */
  readonly prefix?: string | undefined
  /** Deadline for one store call (default 500 ms). Not applied to in-process stores. */
  readonly timeout?: Duration | undefined
  /**
   * On a store error or timeout: `'open'` allows (default), `'closed'` denies, `'local'` decides
   * with a process-local MemoryStore holding the same policy until the store answers again.
   */
  readonly failureMode?: FailureMode | undefined
  /**
   * Circuit breaker: after `failureThreshold` consecutive store failures (default 3) the limiter
   * answers from `failureMode` without calling the store for `coolDown` (default 1 s), then
   * lets one call probe it. `false` disables the breaker.
   */
  readonly circuitBreaker?:
    | { readonly failureThreshold?: number; readonly coolDown?: Duration }
    | false
    | undefined
  /**
   * For remote stores: remember keys the store refused (with nothing remaining) until its
   * Retry-After, and refuse them again without a round trip. It only refuses what the store
   * would refuse; a `reset` or `refund` through this limiter clears the key. Default
   * `{ maxKeys: 10_000 }`; `false` turns it off.
   */
  readonly blockedCache?: { readonly maxKeys?: number } | false | undefined
  /** Called with each store failure (a `LimiterError` whose `cause` is the original). */
  readonly onError?: ((error: LimiterError, context: ErrorContext) => void) | undefined
}

const FAILURE_MODES: readonly FailureMode[] = ['open', 'closed', 'local']
const DEFAULT_TIMEOUT_MS = 500

/** {@link LimiterOptions}, validated, with their defaults. */
export interface LimiterSettings {
  readonly policy: Policy
  readonly store: Store
  readonly name: string
  readonly prefix: string
  readonly timeoutMs: number
  readonly failureMode: FailureMode
  readonly breaker: BreakerOptions
  /** 0 turns the blocked-key cache off. */
  readonly blockedMaxKeys: number
  /** The injected test clock (`@limiter/core/testing`), if any. */
  readonly clock: (() => number) | undefined
}

/** Validates `options`: a bad one throws a `TypeError`/`RangeError` naming it. */
export function limiterSettings(options: LimiterOptions): LimiterSettings {
  const policy = definePolicy(options)
  const store = options.store ?? new MemoryStore()
  if (!isStore(store))
    throw new LimiterTypeError(
      'store',
      store,
      'a store (MemoryStore, RedisStore or one with consume, refund and reset)',
    )
  const name =
    options.name === undefined ? defaultName(policy) : checkName('name', options.name, false)
  const prefix = options.prefix === undefined ? 'rl:' : checkName('prefix', options.prefix, true)
  const timeoutMs =
    options.timeout === undefined ? DEFAULT_TIMEOUT_MS : parseDuration(options.timeout, 'timeout')
  const failureMode = options.failureMode ?? 'open'
  if (!FAILURE_MODES.includes(failureMode)) {
    throw new LimiterRangeError('failureMode', failureMode, "must be 'open', 'closed' or 'local'")
  }
  if (options.onError !== undefined && typeof options.onError !== 'function') {
    throw new LimiterTypeError('onError', options.onError, 'a function')
  }
  const breaker = parseBreaker(options.circuitBreaker)
  const blockedCache: unknown = options.blockedCache
  if (
    blockedCache !== undefined &&
    blockedCache !== false &&
    (blockedCache === null || typeof blockedCache !== 'object')
  ) {
    throw new LimiterTypeError('blockedCache', blockedCache, 'an object { maxKeys? } or false')
  }
  const blockedMaxKeys =
    options.blockedCache === false ? 0 : (options.blockedCache?.maxKeys ?? 10_000)
  if (!Number.isInteger(blockedMaxKeys) || blockedMaxKeys < 0) {
    throw new LimiterRangeError(
      'blockedCache.maxKeys',
      blockedMaxKeys,
      'must be a non-negative integer',
    )
  }
  const clock = (options as { [CLOCK]?: () => number })[CLOCK]
  return {
    policy,
    store,
    name,
    prefix,
    timeoutMs,
    failureMode,
    breaker,
    blockedMaxKeys,
    clock,
  }
}
