// createLimiter's options: their types, and their validation at construction.
import { type BlockedCacheSettings, parseBlockedCache } from './blocked-cache.js'
import { CLOCK } from './clock.js'
import { MAX_TIMER_MS, parseDuration } from './duration.js'
import { LimiterRangeError, LimiterTypeError } from './errors.js'
import type { BreakerOptions } from './guard.js'
import type { FailureMode, LimiterOptions } from './limiter-types.js'
import { checkName, claimName, defaultName, storeNamespace } from './naming.js'
import { checkOptionNames, own, ownOptions } from './option-names.js'
import { definePolicy, type Policy } from './policy.js'
import { MemoryStore } from './stores/memory-store.js'
import { isStore, type Store } from './stores/store.js'

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

/** Validates the `circuitBreaker` option. */
function parseBreaker(value: LimiterOptions['circuitBreaker']): BreakerOptions {
  if (value === false) return { failureThreshold: Number.POSITIVE_INFINITY, coolDownMs: 0 }
  if (value === undefined) return { failureThreshold: 3, coolDownMs: 1000 }
  if (value === null || typeof value !== 'object') {
    throw new LimiterTypeError(
      'circuitBreaker',
      value,
      'an object { failureThreshold?, coolDown? } or false',
    )
  }
  const failureThreshold = own(value, 'failureThreshold') ?? 3
  if (
    typeof failureThreshold !== 'number' ||
    !Number.isInteger(failureThreshold) ||
    failureThreshold < 1
  ) {
    throw new LimiterRangeError(
      'circuitBreaker.failureThreshold',
      failureThreshold,
      'must be a positive integer',
    )
  }
  const coolDown = own(value, 'coolDown')
  const coolDownMs =
    coolDown === undefined ? 1000 : parseDuration(coolDown, 'circuitBreaker.coolDown')
  return { failureThreshold, coolDownMs }
}
