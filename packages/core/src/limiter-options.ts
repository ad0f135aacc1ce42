// createLimiter's options: their types, and their validation at construction.
import { type BlockedCacheSettings, parseBlockedCache } from './blocked-cache.js'
import { CLOCK } from './clock.js'
import { type Duration, MAX_TIMER_MS, parseDuration } from './duration.js'
import { type LimiterError, LimiterRangeError, LimiterTypeError } from './errors.js'
import { parseBreaker } from './failure.js'
import type { BreakerOptions } from './guard.js'
import type { Limiter } from './limiter.js'
import { checkName, claimName, defaultName, storeNamespace } from './naming.js'
import { checkOptionNames, ownOptions } from './option-names.js'
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
   * For remote stores: remember keys the store refused (with nothing remaining), and refuse them
   * again without a round trip for at most `maxMs` (default 1 s) and never past the store's
   * Retry-After. A `reset` or `refund` through this limiter clears the key at once; one made by
   * another process takes effect here within `maxMs`. At most `maxKeys` keys (default 10,000).
   * `false` turns it off.
   */
  readonly blockedCache?:
    | { readonly maxKeys?: number | undefined; readonly maxMs?: Duration | undefined }
    | false
    | undefined
  /** Called with each store failure (a `LimiterError` whose `cause` is the original). */
  readonly onError?: ((error: LimiterError, context: ErrorContext) => void) | undefined
}

const LIMITER_OPTIONS: ReadonlySet<string> = new Set(
  'algorithm limit window burst store name prefix timeout failureMode circuitBreaker blockedCache onError'.split(
    ' ',
  ),
)
const FAILURE_MODES: readonly FailureMode[] = ['open', 'closed', 'local']
const DEFAULT_TIMEOUT_MS = 500

/** {@link LimiterOptions}, validated, with their defaults. */
export interface LimiterSettings {
  readonly policy: Policy
  readonly store: Store
  readonly name: string
  readonly prefix: string
  /** Where this limiter's keys live in the store (see `storeNamespace`). */
  readonly namespace: string
  readonly timeoutMs: number
  readonly failureMode: FailureMode
  readonly breaker: BreakerOptions
  /** The blocked-key cache's bounds; `maxKeys` 0 turns it off. */
  readonly blocked: BlockedCacheSettings
  /** The injected test clock (`@limiter/core/testing`), if any. */
  readonly clock: (() => number) | undefined
}

/** Validates `options`: a bad one throws a `TypeError`/`RangeError` naming it. */
export function limiterSettings(given: LimiterOptions): LimiterSettings {
  // Own properties only: a polluted Object.prototype must not set an option.
  const options = ownOptions(given)
  checkOptionNames(options, LIMITER_OPTIONS)
  const policy = definePolicy(options)
  const store = options.store ?? new MemoryStore()
  if (!isStore(store))
    throw new LimiterTypeError(
      'store',
      store,
      'a store (MemoryStore, RedisStore or one with consume, refund and reset)',
    )
  const chosen = options.name !== undefined
  const name = chosen ? checkName('name', options.name, false) : defaultName(policy)
  const prefix = options.prefix === undefined ? 'rl:' : checkName('prefix', options.prefix, true)
  if (chosen) claimName(store, prefix, name, policy.algorithm)
  const namespace = storeNamespace(prefix, name, policy.algorithm, chosen)
  const timeoutMs =
    options.timeout === undefined
      ? DEFAULT_TIMEOUT_MS
      : parseDuration(options.timeout, 'timeout', MAX_TIMER_MS)
  const failureMode = options.failureMode ?? 'open'
  if (!FAILURE_MODES.includes(failureMode)) {
    throw new LimiterRangeError('failureMode', failureMode, "must be 'open', 'closed' or 'local'")
  }
  if (options.onError !== undefined && typeof options.onError !== 'function') {
    throw new LimiterTypeError('onError', options.onError, 'a function')
  }
  const breaker = parseBreaker(options.circuitBreaker)
  const blocked = parseBlockedCache(options.blockedCache)
  const clock = (options as { [CLOCK]?: () => number })[CLOCK]
  return {
    policy,
    store,
    name,
    prefix,
    namespace,
    timeoutMs,
    failureMode,
    breaker,
    blocked,
    clock,
  }
}
