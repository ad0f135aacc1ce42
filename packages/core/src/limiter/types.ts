// The limiter's public types, in a module of their own so the limiter, its options and its
// failure policy import them one way.

import type { Duration } from '../common/duration.js'
import type { LimiterError } from '../common/errors.js'
import type { Decision } from '../decision/decision.js'
import type {
  Algorithm,
  DefaultAlgorithm,
  Defaulted,
  LimitSpec,
  NamedPolicy,
  NotAnOption,
  Policy,
  PolicyOptionsOf,
  RateAlgorithm,
  ReservingAlgorithm,
} from '../policies/policy.js'
import type { Priority } from '../shed/priority.js'
import type { Store } from '../stores/store.js'

/**
 * A rate limiter: one policy, or several decided all or nothing. Decisions are values: a denial
 * resolves, it does not throw.
 */
export interface Limiter {
  /** The first policy (the only one, unless `limits` holds several). */
  readonly policy: Policy
  /** Every policy, named, in declaration order. */
  readonly policies: readonly NamedPolicy[]
  readonly name: string
  readonly prefix: string
  /**
   * `'enforce'` (the default), or `'shadow'`: decisions are made and counted exactly as when
   * enforcing, but adapters let a refused request through (without 429, `Retry-After` or
   * RateLimit headers) and `acquire` never waits; decision events carry `shadow: true`.
   */
  readonly mode: LimiterMode
  /**
   * Counts `cost` (default 1) against `key` if every policy admits it; if one refuses, no
   * policy counts it. `cost` 0 peeks. `options.priority`: the request's class (default
   * `'normal'`), which a concurrency policy's `reserve` admits only below its class's ceiling.
   */
  consume(key: string, cost?: number, options?: ConsumeOptions): Promise<Decision>
  /**
   * The decision a cost-1 request would get now; changes nothing. `options.priority`: the class
   * asking (a fleet reserve's ceiling depends on it; default `'normal'`).
   */
  peek(key: string, options?: ConsumeOptions): Promise<Decision>
  /** Forgets `key` in every policy: it is back to full capacity, and any `block` is lifted. */
  reset(key: string): Promise<void>
  /**
   * Blocks `key` for `duration` (ms, or `'15m'`-style; at most a year): until then every
   * consume and peek of it is refused by every policy (concurrency ones too), counting nothing,
   * with `remaining` 0 and a `retryAfterMs` no earlier than the block's end. On Redis the block
   * is one key beside the key's state (same hash tag), ending by Redis's clock, so every
   * process honours it; a longer block already in place is never shortened. `reset(key)` lifts
   * it. Refunds and releases are never blocked. Rejects with a `LimiterError` if the store
   * fails or has no `block` method (`ERR_LIMITER_UNSUPPORTED`).
   */
  block(key: string, duration: Duration): Promise<void>
  /**
   * A penalty: counts `cost` (default 1; an integer from 1 to 2^32 - 1, not capped by `burst`)
   * against `key` in every rate policy even past the limit (concurrency policies are not
   * penalized: a penalty is not a lease), and resolves with the decision as it stands afterwards:
   * `allowed` whether a request of cost 1 would pass now, `retryAfterMs` how long until it
   * would. A penalty past the limit pushes that further out: that is the point (a penalty moves
   * a GCRA-family key's wait at most one window past a full bucket; the window algorithms forget
   * it when their windows pass). Rejects (`ERR_LIMITER_UNSUPPORTED`) for a limiter with only
   * concurrency policies.
   */
  penalize(key: string, cost?: number): Promise<Decision>
  /**
   * Gives `cost` (default 1) back to `key` in every policy, never above full. Pass the `Decision`
   * that consume returned to remove exactly what that request added (needed for `sliding-log`,
   * and for `concurrency`, whose lease it releases).
   */
  refund(key: string, cost?: number, decision?: Decision): Promise<void>
  /**
   * Gives back the lease a `concurrency` admission holds, so the next request may go in at once.
   * Idempotent: a second call, or a decision that held no lease (a refusal, a limiter without a
   * concurrency policy), does nothing. Store failures go to `onError`; it rejects only for a
   * bad key.
   */
  release(key: string, decision: Decision): Promise<void>
  /**
   * Waits for a slot, for outbound calls: resolves with the decision once the caller may go
   * ahead (after waiting its `delayMs`, or for a concurrency slot to free). Rejects with a
   * `LimiterError` coded `ERR_LIMITER_REFUSED` (carrying the refusal as `decision`) when no slot
   * can be had within `maxWait`, or with the signal's reason once `signal` aborts (any
   * reservation is given back).
   */
  acquire(key: string, options?: AcquireOptions): Promise<Decision>
  /**
   * Runs `fn` in a slot: `acquire`, then `fn(decision)`, then `release`, whatever `fn` does.
   * Resolves with what `fn` returns.
   */
  run<T>(
    key: string,
    fn: (decision: Decision) => T | PromiseLike<T>,
    options?: AcquireOptions,
  ): Promise<T>
  /**
   * Resolves once this limiter's releases and refunds in flight (the adapters start them as
   * responses finish) have settled, answered by the store or failed: await it at shutdown,
   * before you quit the Redis client, so no concurrency lease is left to expire. It quits no
   * client and stops nothing: the limiter keeps working. `closeLimiters()` does it for every
   * limiter of the process.
   */
  close(): Promise<void>
}

/** Options of {@link Limiter.acquire} and {@link Limiter.run}. */
export interface AcquireOptions {
  /** The request's cost (default 1). */
  readonly cost?: number | undefined
  /**
   * The longest to wait for a slot, in all (default: the limiter's `acquire.maxWait`, else as
   * long as the limiter lets a request wait: `maxDelay`, or the wait `delayAfter` allows; 0
   * without either: take a slot now or be refused).
   */
  readonly maxWait?: Duration | undefined
  /** Stops waiting: the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal | undefined
  /**
   * The call's priority class, as `consume` takes it (default `'normal'`): a concurrency
   * policy's `reserve` admits it only below its class's ceiling. With a reserve, a caller above
   * normal asks at once instead of queueing behind those already waiting for the key.
   */
  readonly priority?: Priority | undefined
}

/** Whether a limiter's refusals are enforced, or only observed (`'shadow'`). */
export type LimiterMode = 'enforce' | 'shadow'

/** What the limiter does when its store fails or misses the deadline. */
export type FailureMode = 'open' | 'closed' | 'local'

/** What `onError` receives besides the error. */
export interface ErrorContext {
  readonly key: string
  readonly limiter: Limiter
  /** What the limiter does about the failure: its `failureMode`. */
  readonly failureMode: FailureMode
  /**
   * The call that failed: `'decide'` (consume, peek, block, penalize: answered from
   * `failureMode`), or `'release'`, `'refund'` or `'reset'`, which `failureMode` does not touch (a
   * lease not released expires after its window; a cost not refunded stays counted).
   */
  readonly operation: FailedOperation
}

/** What {@link Limiter.consume} takes besides the key and cost. */
export interface ConsumeOptions {
  /**
   * The request's priority class: `'critical'`, `'high'`, `'normal'` (the default), `'low'` or a
   * whole number rank (0 critical, larger is lower). Only a concurrency policy with `reserve`
   * reads it; it also travels in `limiter:decision` events.
   */
  readonly priority?: Priority | undefined
  /**
   * The most this call waits for a reserved slot, a duration (`'200ms'`) or ms, 0 for a slot free
   * now: narrows the limiter's `maxDelay` (or the wait `delayAfter` allows) for this call alone. A
   * request whose slot is further away is refused, its `retryAfterMs` as without the limiter's
   * wait, and reserves nothing. A limiter that does not wait ignores it. `acquire` and `run` pass
   * the time their caller has left.
   */
  readonly maxDelay?: Duration | undefined
}

/**
 * Internal: a limiter's consume as its parts pass it on, for a key and cost already validated:
 * `rank`, the request's priority rank (`undefined`: normal); `waitMs`, the most whole ms it may
 * wait for a reserved slot (`undefined`: the limiter's `maxDelay`). Synchronous when the store
 * can answer so.
 */
export type Decide = (
  key: string,
  cost: number,
  rank?: number,
  waitMs?: number,
) => Decision | Promise<Decision>

/** Which call of a limiter a store failure hit (see {@link ErrorContext}). */
export type FailedOperation = 'decide' | 'release' | 'refund' | 'reset'

/**
 * Options for {@link createLimiter}: one policy (`limit`, `window`, `algorithm`, `burst`), or
 * several in `limits`, plus where and how to keep their counters.
 */
export type LimiterOptions = LimiterBaseOptions & (OnePolicy | SeveralPolicies)

/**
 * What a one-policy limiter of algorithm `A` takes besides its store options: the policy, and
 * waiting (`maxDelay`, `delayAfter`) where `A` can reserve a slot.
 */
export type OnePolicyOf<A extends Algorithm> = PolicyOptionsOf<A> &
  WaitingFor<A> & { readonly limits?: undefined }

/**
 * `maxDelay` and `delayAfter` where the algorithm can reserve a later slot, and where it cannot
 * the sentence a compiler error shows (`maxDelay: 0`, no waiting, is accepted everywhere).
 */
export type WaitingFor<A extends Algorithm> = [A] extends [ReservingAlgorithm]
  ? WaitingOptions
  : {
      readonly maxDelay?:
        | 0
        | NotAnOption<"`maxDelay` needs a 'gcra', 'token-bucket' or 'leaky-bucket' policy to reserve a slot in">
        | undefined
      readonly delayAfter?:
        | NotAnOption<"`delayAfter` needs a 'gcra', 'token-bucket' or 'leaky-bucket' policy to reserve a slot in">
        | undefined
    }

/**
 * The one-policy shorthand: a one-entry `limits`. A union on `algorithm`: where it is a literal,
 * an option the algorithm does not take (`maxDelay` on `'fixed-window'`, `retryAfter` on a rate
 * algorithm) is a compile error; without `algorithm`, what the default algorithm takes.
 */
export type OnePolicy =
  | OnePolicyOf<ReservingAlgorithm>
  | OnePolicyOf<Exclude<RateAlgorithm, ReservingAlgorithm>>
  | OnePolicyOf<'concurrency'>
  | Defaulted<OnePolicyOf<DefaultAlgorithm>>

/** Several policies on one key, decided all or nothing. */
export interface SeveralPolicies extends WaitingOptions {
  /**
   * 1 to 8 policies. A request is admitted only if every policy admits it, and then all of them
   * count it; a refused request is counted by none. Names must be distinct within the limiter.
   */
  readonly limits: readonly LimitSpec[]
  readonly limit?: undefined
  readonly window?: undefined
  readonly algorithm?: undefined
  readonly burst?: undefined
  readonly retryAfter?: undefined
  readonly reserve?: undefined
}

/**
 * Names rate-limiter-flexible uses for this package's options and methods: each is a compile
 * error whose text says what to write instead (and a runtime error with the same advice).
 */
export interface LimiterPeerNames {
  /** @deprecated Not an option: use `limit`. */
  readonly points?: NotAnOption<'use `limit` instead of `points`'> | undefined
  /** @deprecated Not an option: use `window`, with a unit: `'60s'`. */
  readonly duration?:
    | NotAnOption<"use `window` instead of `duration`, with a unit: rate-limiter-flexible's `duration: 60` (seconds) is `window: '60s'`, koa-ratelimit's (ms) is `window: '60ms'`">
    | undefined
  /** @deprecated Not an option: call `limiter.block(key, '15m')`. */
  readonly blockDuration?:
    | NotAnOption<"no block option: call `limiter.block(key, '15m')`; `blockDuration: 900` (seconds) is '900s'">
    | undefined
  /** @deprecated Not an option: use `prefix`. */
  readonly keyPrefix?: NotAnOption<'use `prefix` instead of `keyPrefix`'> | undefined
  /** @deprecated Not an option: use `maxDelay`. */
  readonly execEvenly?:
    | NotAnOption<'use `maxDelay` (with gcra) instead of `execEvenly`'>
    | undefined
}

/** The options of {@link createLimiter} besides its policies and waiting. */
export interface LimiterBaseOptions extends LimiterPeerNames {
  /** Where state lives. Default: a new `MemoryStore`. */
  readonly store?: Store | undefined
  /**
   * Names this limiter's counters. Limiters with the same `prefix` and `name` share counters.
   * Default: derived from the policy (e.g. `gc100/1m`), so the same definition in many
   * processes shares one counter. Set it to keep counters across a change of limit. With
   * `limits`, a policy's counters are named by `prefix`, this `name` (when given) and the
   * policy's own name.
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
  /**
   * `'enforce'` (default) or `'shadow'`: a shadow limiter decides and counts exactly as an
   * enforcing one, but its adapters never refuse (no 429, no `Retry-After`, no RateLimit
   * headers; the decision is still on the request) and `acquire` never waits. Its decision
   * events carry `shadow: true`, so metrics show whom the limit would hit before it is enforced.
   */
  readonly mode?: LimiterMode | undefined
  /** Called with each store failure (a `LimiterError` whose `cause` is the original). */
  readonly onError?: ((error: LimiterError, context: ErrorContext) => void) | undefined
  /**
   * Defaults for {@link Limiter.acquire} and {@link Limiter.run}: `maxWait`, how long a call that
   * gives none waits for a slot (0: take one now or be refused). Default: `maxDelay`, or the
   * wait `delayAfter` allows, else 0.
   */
  readonly acquire?: { readonly maxWait?: Duration | undefined } | undefined
}

/** Waiting instead of refusing: options of a limiter with a policy that can reserve a slot. */
export interface WaitingOptions {
  /**
   * Wait instead of refusing (default 0: refuse): a request that would be refused but can pass
   * within `maxDelay` reserves its slot at once and is admitted with `delayMs`, the time to wait
   * before going ahead. Beyond it, it is refused as usual. Only `gcra`, `token-bucket` and
   * `leaky-bucket` policies can reserve exactly; other algorithms throw (`concurrency` policies
   * may sit alongside in `limits`: they decide now).
   */
  readonly maxDelay?: Duration | undefined
  /**
   * With waiting: how many of a burst pass at once (default: the policy's `burst`); the rest
   * wait their turn at the policy's rate. Alone, it allows waiting until `burst` is used up, as
   * nginx's `limit_req burst=B delay=N` does.
   */
  readonly delayAfter?: number | undefined
}

/** The options of {@link createLimiter} besides its policies. */
export interface LimiterStoreOptions extends LimiterBaseOptions, WaitingOptions {}
