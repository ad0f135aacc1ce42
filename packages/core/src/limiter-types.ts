// The limiter's public types, in a module of their own so the limiter, its options and its
// failure policy import them one way.
import type { Decision } from './decision.js'
import type { Duration } from './duration.js'
import type { LimiterError } from './errors.js'
import type { Policy, PolicyOptions } from './policy.js'
import type { Store } from './stores/store.js'

/** A rate limiter for one policy. Decisions are values: a denial resolves, it does not throw. */
export interface Limiter {
  readonly policy: Policy
  readonly name: string
  readonly prefix: string
  /** Counts `cost` (default 1) against `key` if it fits. `cost` 0 peeks. */
  consume(key: string, cost?: number): Promise<Decision>
  /** The decision a cost-1 request would get now; changes nothing. */
  peek(key: string): Promise<Decision>
  /** Forgets `key`: it is back to full capacity. */
  reset(key: string): Promise<void>
  /**
   * Gives `cost` (default 1) back to `key`, never above full. Pass the `Decision` that consume
   * returned to remove exactly what that request added (needed for `sliding-log`).
   */
  refund(key: string, cost?: number, decision?: Decision): Promise<void>
}

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
