// createLimiter's options resolved in one pass, at construction, into one frozen LimiterSettings
// value: every option validated (a bad one throws naming it), every default applied, durations in
// ms. The limiter's parts (store paths, blocks, waiting, failure reports) read only the settings.

import { CLOCK } from '../common/clock.js'
import { type Duration, MAX_TIMER_MS, parseDuration, parseWait } from '../common/duration.js'
import { type LimiterError, LimiterRangeError, LimiterTypeError } from '../common/errors.js'
import {
  checkOptionNames,
  knownOptions,
  own,
  ownOptions,
  type ScopeHints,
} from '../common/option-names.js'
import { type PolicySet, policySetOf } from '../policies/limits.js'
import { checkName } from '../policies/naming.js'
import type { NamedPolicy, Policy } from '../policies/policy.js'
import { MemoryStore } from '../stores/memory-store.js'
import { DECIDES_SETS, isStore, type Store } from '../stores/store.js'
import type { Waiting } from './acquire.js'
import type { BlockedCacheSettings } from './blocked-cache.js'
import { defaultOnError } from './failure.js'
import type { BreakerOptions } from './guard.js'
import { namedStore } from './named-stores.js'
import type { ErrorContext, FailureMode, LimiterMode, LimiterOptions } from './types.js'

const LIMITER_OPTIONS: ReadonlySet<string> = new Set(
  'algorithm limit window burst retryAfter reserve limits store name prefix timeout failureMode circuitBreaker blockedCache onError maxDelay delayAfter mode acquire'.split(
    ' ',
  ),
)
const FAILURE_MODES: readonly FailureMode[] = ['open', 'closed', 'local']
const MODES: readonly LimiterMode[] = ['enforce', 'shadow']
const DEFAULT_TIMEOUT_MS = 500

const DEFAULT_MAX_KEYS = 10_000
const DEFAULT_MAX_MS = 1000

// The nested options' names, and other libraries' names for them (lru-cache's `max`; opossum's
// `resetTimeout` and cockatiel's `halfOpenAfter`, in ms as `coolDown` is).
const BLOCKED_CACHE_OPTIONS: ReadonlySet<string> = new Set(['maxKeys', 'maxMs'])
const BLOCKED_CACHE_HINTS: ScopeHints = new Map([['max', 'maxKeys']])
const BREAKER_OPTIONS: ReadonlySet<string> = new Set(['failureThreshold', 'coolDown'])
const BREAKER_HINTS: ScopeHints = new Map([
  ['threshold', 'failureThreshold'],
  ['failures', 'failureThreshold'],
  ['resetTimeout', 'coolDown'],
  ['halfOpenAfter', 'coolDown'],
])

/** Validates the `blockedCache` option (`false`, or `{ maxKeys?, maxMs? }`). */
function parseBlockedCache(value: unknown): BlockedCacheSettings {
  if (value === undefined) return { maxKeys: DEFAULT_MAX_KEYS, maxMs: DEFAULT_MAX_MS }
  if (value === false) return { maxKeys: 0, maxMs: 0 }
  if (value === null || typeof value !== 'object')
    throw new LimiterTypeError('blockedCache', value, 'an object { maxKeys?, maxMs? } or false')
  knownOptions(value, BLOCKED_CACHE_OPTIONS, 'blockedCache.', BLOCKED_CACHE_HINTS)
  const maxKeys = own(value, 'maxKeys') ?? DEFAULT_MAX_KEYS
  if (typeof maxKeys !== 'number' || !Number.isInteger(maxKeys) || maxKeys < 0) {
    throw new LimiterRangeError('blockedCache.maxKeys', maxKeys, 'must be a non-negative integer')
  }
  const maxMs = own(value, 'maxMs')
  return {
    maxKeys,
    maxMs:
      maxMs === undefined ? DEFAULT_MAX_MS : parseDuration(maxMs as Duration, 'blockedCache.maxMs'),
  }
}

/** {@link LimiterOptions}, validated, with their defaults: frozen, read by the limiter's parts. */
export interface LimiterSettings {
  /** The limiter's policies and where their counters live. */
  readonly set: PolicySet
  /** The first policy (the only one, for most limiters). */
  readonly policy: Policy
  readonly store: Store
  readonly name: string
  readonly prefix: string
  /** Where the first policy's keys live in the store (see `storeNamespace`). */
  readonly namespace: string
  readonly timeoutMs: number
  readonly failureMode: FailureMode
  /** Told each store failure: `onError`, else the default (one console line per 30 s). */
  readonly onError: (error: LimiterError, context: ErrorContext) => void
  /** `'shadow'`: decide and count, but let refused requests through (adapters, acquire). */
  readonly mode: LimiterMode
  readonly breaker: BreakerOptions
  /** The blocked-key cache's bounds; `maxKeys` 0 turns it off. */
  readonly blocked: BlockedCacheSettings
  /** What acquire/run wait by: the policies' `waitMs`, and `acquire.maxWait` (else `waitMs`). */
  readonly waiting: Waiting
  /** The injected test clock (`@limiter/core/testing`), if any. */
  readonly clock: (() => number) | undefined
}

// The `store` option, checked (`undefined`: none given).
function givenStore(store: unknown): Store | undefined {
  if (store !== undefined && !isStore(store))
    throw new LimiterTypeError(
      'store',
      store,
      'a store (MemoryStore, RedisStore or one with consume, refund and reset)',
    )
  return store
}

// Several policies need a store that decides them together.
function checkSetStore(set: PolicySet, store: Store | undefined): void {
  if (set.policies.length > 1 && store !== undefined && !(DECIDES_SETS in store))
    throw new LimiterTypeError(
      'store',
      store,
      'a store that decides several policies together (MemoryStore or RedisStore) for `limits` with more than one policy',
    )
}

/** Resolves `options` once: a bad one throws a `TypeError`/`RangeError` naming it. */
export function limiterSettings(given: LimiterOptions): LimiterSettings {
  // Own properties only: a polluted Object.prototype must not set an option.
  const options = ownOptions(given)
  checkOptionNames(options, LIMITER_OPTIONS)
  const ownStore = givenStore(options.store)
  const prefix = options.prefix === undefined ? 'rl:' : checkName('prefix', options.prefix, true)
  // Named with no store: the process's store for that name, where its claims are (see namedStore)
  const named =
    ownStore === undefined && typeof options.name === 'string' && options.name !== ''
      ? namedStore(prefix, options.name)
      : undefined
  // A store made below is new: no name can be claimed on it yet.
  const set = policySetOf(options, prefix, ownStore ?? named ?? {})
  checkSetStore(set, ownStore)
  const timeoutMs =
    options.timeout === undefined
      ? DEFAULT_TIMEOUT_MS
      : parseDuration(options.timeout, 'timeout', MAX_TIMER_MS)
  const failureMode = options.failureMode ?? 'open'
  if (!FAILURE_MODES.includes(failureMode)) {
    throw new LimiterRangeError('failureMode', failureMode, "must be 'open', 'closed' or 'local'")
  }
  const mode = options.mode ?? 'enforce'
  if (!MODES.includes(mode)) {
    throw new LimiterRangeError('mode', mode, "must be 'enforce' or 'shadow'")
  }
  if (options.onError !== undefined && typeof options.onError !== 'function') {
    throw new LimiterTypeError('onError', options.onError, 'a function')
  }
  const onError = options.onError ?? defaultOnError()
  const breaker = parseBreaker(options.circuitBreaker)
  const blocked = parseBlockedCache(options.blockedCache)
  const acquireWaitMs = parseAcquire(options.acquire)
  const clock = (options as { [CLOCK]?: () => number })[CLOCK]
  // Made last: a bad option above leaves no store (and no sweep timer) behind.
  const store = ownStore ?? named ?? new MemoryStore()
  return Object.freeze({
    set,
    policy: unnamed(set.policies[0] as NamedPolicy),
    store,
    name: set.name,
    prefix,
    namespace: set.namespaces[0] as string,
    timeoutMs,
    failureMode,
    onError,
    mode,
    breaker: Object.freeze(breaker),
    blocked: Object.freeze(blocked),
    waiting: Object.freeze({ waitMs: set.waitMs, maxWaitMs: acquireWaitMs ?? set.waitMs }),
    clock,
  })
}

// A named policy as the plain Policy a limiter's `policy` has always been.
function unnamed(named: NamedPolicy): Policy {
  const { name: _, ...policy } = named
  return Object.freeze(policy)
}

const ACQUIRE_OPTIONS: ReadonlySet<string> = new Set(['maxWait'])

/** Validates the `acquire` option: its `maxWait` in ms, if given. */
function parseAcquire(value: LimiterOptions['acquire']): number | undefined {
  if (value === undefined) return undefined
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new LimiterTypeError('acquire', value, 'an object { maxWait? }')
  checkOptionNames(value, ACQUIRE_OPTIONS, 'acquire.')
  const maxWait = own(value, 'maxWait')
  return maxWait === undefined ? undefined : parseWait(maxWait, 'acquire.maxWait')
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
  knownOptions(value, BREAKER_OPTIONS, 'circuitBreaker.', BREAKER_HINTS)
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
