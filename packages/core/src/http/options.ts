// The one option definition every adapter shares, validated once, at construction.
import { CLOCK } from '../common/clock.js'
import type { Duration } from '../common/duration.js'
import { LimiterTypeError } from '../common/errors.js'
import { ownOptions } from '../common/option-names.js'
import type { Decision } from '../decision/decision.js'
import { createLimiter, type FailureMode, type LimiterOptions } from '../limiter/create-limiter.js'
import type {
  LimiterMode,
  LimiterPeerNames,
  LimiterStoreOptions,
  OnePolicy,
  WaitingOptions,
} from '../limiter/types.js'
import { policySetOf } from '../policies/limits.js'
import type { LimitSpec, NotAnOption } from '../policies/policy.js'
import { type Priority, priorityRank } from '../shed/priority.js'
import type { Shedder } from '../shed/types.js'
import type { RedisStoreClient } from '../stores/redis-store.js'
import type { Store } from '../stores/store.js'
import type { HeaderStandard } from './headers.js'
import { ipKey } from './key-helpers.js'
import { type LimitSet, type LimitsFunction, limitSet, limitsPerRequest } from './limit-sets.js'
import {
  checkAdapterOptionNames,
  checkCost,
  checkStatusCode,
  headerStandards,
  type LimitedBody,
  messageBody,
  optionalBoolean,
  optionalFunction,
  storeOf,
} from './option-checks.js'
import { DENIED } from './problem.js'
import type { DeniedCheck } from './types.js'
import { type RequestAddresses, requestWatch, scopeWatch } from './warnings.js'

export type { LimitSet } from './limit-sets.js'
export type { LimitedBody } from './option-checks.js'

/** A value or a promise of it. */
export type Awaitable<T> = T | Promise<T>

/** A limited response body: a string (sent as `text/plain`) or an object (sent as JSON). */
export type MessageBody = string | object

/** The `message` option: a body, or a callback that returns one. */
export type Message<Req> = MessageBody | ((req: Req, decision: Decision) => Awaitable<MessageBody>)

/**
 * Options for every adapter's `rateLimit()`: one policy (`limit`, `window`, `algorithm`,
 * `burst`) or several (`limits`), and how requests are keyed, counted and answered. `Req` is the
 * framework's request type; `OnLimited` the framework's signature for a custom limited response.
 */
export type RateLimitOptions<Req, OnLimited = never> = RateLimitBaseOptions<Req, OnLimited> &
  (OnePolicyOptions | LimitsOptions<Req>)

/**
 * The one-policy shorthand of {@link RateLimitOptions}, a union on `algorithm` (see
 * `OnePolicy`): `maxDelay` on `'fixed-window'` or `retryAfter` on `'gcra'` is a compile error.
 */
export type OnePolicyOptions = OnePolicy

/** Several policies on one key, decided all or nothing; fixed, or chosen per request. */
export interface LimitsOptions<Req> extends WaitingOptions {
  /**
   * 1 to 8 policies: a request passes only if every one admits it, and then all count it; a
   * refused request is counted by none. Or a function of the request returning the policies (or
   * a promise of them), e.g. by the caller's plan: tiers with different numbers never share
   * counters unless their policies share a `name`.
   */
  readonly limits:
    | readonly LimitSpec[]
    | ((req: Req) => Awaitable<LimitSpec | readonly LimitSpec[]>)
  readonly limit?: undefined
  readonly window?: undefined
  readonly algorithm?: undefined
  readonly burst?: undefined
  readonly retryAfter?: undefined
  readonly reserve?: undefined
}

/** The options of {@link RateLimitOptions} besides its policies and waiting. */
export interface RateLimitBaseOptions<Req, OnLimited = never> extends PeerOptionNames {
  /** Where counters live. Default: a `MemoryStore` of this limiter's own. */
  readonly store?: Store | undefined
  /** An ioredis or node-redis client or cluster: shorthand for `store: new RedisStore({ client })`. */
  readonly redis?: RedisStoreClient | undefined
  /**
   * Names the counters: limiters with the same `prefix` and `name` share them. Default: derived
   * from the policy and, for a limiter on a route or mount path, from the method and route pattern.
   */
  readonly name?: string | undefined
  /** Prepended to every store key (default `'rl:'`). */
  readonly prefix?: string | undefined
  /**
   * Who is limited: a non-empty string, or a finite number or bigint (used as its decimal string,
   * so `7` and `'7'` share a counter), per request. Default: the client IP (see `ipKey`).
   */
  readonly key?: ((req: Req) => Awaitable<string | number | bigint>) | undefined
  /** What a request costs: an integer from 1 to `burst`, or a callback. Default 1. */
  readonly cost?: number | ((req: Req) => Awaitable<number>) | undefined
  /**
   * The request's priority class (default `'normal'`), fixed or from a callback: a concurrency
   * policy with `reserve` admits a class only below its ceiling (a refusal by the reserve alone
   * is answered 503, not 429); it also travels in `limiter:decision` events.
   */
  readonly priority?: Priority | ((req: Req) => Awaitable<Priority>) | undefined
  /**
   * A process shedder (`createShedder` from `@limiter/core/shed`), asked before the limiter
   * counts anything, with the request's `priority`: a shed request is answered 503 with
   * `Retry-After` and spends no client budget; an admitted one ends its admission (`done`) when
   * the request is over, with the lifecycle that releases leases.
   */
  readonly shed?: Shedder | undefined
  /** Return true to let a request through uncounted and without headers. */
  readonly skip?: ((req: Req) => Awaitable<boolean | undefined>) | undefined
  /**
   * Return a truthy value (as for `skip`: `true`, a deny list's entry or row) to refuse a request
   * outright (a deny list: banned IPs, revoked API keys): it gets 403 and a problem document,
   * before `skip` and before any counting, and its handler never runs. `onLimited` and `message`
   * are not used for it. In `mode: 'shadow'` it refuses nothing: the request goes on uncounted.
   */
  readonly deny?: ((req: Req) => Awaitable<unknown>) | undefined
  /**
   * `'enforce'` (default) or `'shadow'`: decide and count as usual, but never refuse: a request
   * that would have been limited goes on to the handler, without 429, `Retry-After` or RateLimit
   * headers (no request of a shadow limiter gets them). The decision is still on the request and
   * in the limiter's events (`shadow: true`), so metrics show whom a new limit would hit.
   */
  readonly mode?: LimiterMode | undefined
  /** Status of a limited response (default 429). */
  readonly statusCode?: number | undefined
  /** Body of a limited response. Default: an RFC 9457 `application/problem+json` document. */
  readonly message?: Message<Req> | undefined
  /** Full control of the limited response (headers are already set). Replaces `message`. */
  readonly onLimited?: OnLimited | undefined
  /** Which rate-limit headers to send (default `'draft-10'`); `false` sends none but `Retry-After`. */
  readonly headers?: HeaderStandard | readonly HeaderStandard[] | false | undefined
  /** Give the cost back when the response status is below 400. */
  readonly skipSuccessfulRequests?: boolean | undefined
  /** Give the cost back when the status is 400 or more. */
  readonly skipFailedRequests?: boolean | undefined
  /**
   * Give the cost back when the client went away before the response finished. Off by default:
   * the handler ran, so an aborted request counts (else a client that hangs up on every call
   * runs the handler without limit).
   */
  readonly skipAbortedRequests?: boolean | undefined
  /**
   * When a concurrency lease (and what the skip options owe) is settled for a client that went
   * away. Default `false`: a request holds its lease until its handler has ended the response
   * (Express and Nest: `res.end`; Koa: the downstream middleware settled, and a streamed body
   * ended or closed; Fastify: the reply sent, its raw `res.end`), even when the client left
   * before, so a client that hangs up cannot run more handlers at once than the limit. `true`:
   * the lease comes back as soon as the client leaves (the response or its connection closes),
   * while the handler may still run. Either way a lease whose release never comes (a handler that
   * never ends its response) expires after its policy's `window`.
   */
  readonly releaseOnDisconnect?: boolean | undefined
  /**
   * `false` silences the warnings a limiter gives once (a key with an `undefined` segment, a
   * forwarding header the framework ignores). Default `true`.
   */
  readonly warnings?: boolean | undefined
  /** Called with each store failure (see `createLimiter`). */
  readonly onError?: LimiterOptions['onError']
  /** On a store failure: `'open'` (default), `'closed'` or `'local'`. */
  readonly failureMode?: FailureMode | undefined
  /** Deadline for one store call (default 500 ms). */
  readonly timeout?: Duration | undefined
  /** Circuit breaker on store failures (see `createLimiter`); `false` disables it. */
  readonly circuitBreaker?: LimiterOptions['circuitBreaker']
  /** Remember refused keys until their Retry-After (remote stores; see `createLimiter`). */
  readonly blockedCache?: LimiterOptions['blockedCache']
}

/** The options of {@link RateLimitOptions} besides its policies. */
export interface SharedRateLimitOptions<Req, OnLimited = never>
  extends RateLimitBaseOptions<Req, OnLimited>,
    WaitingOptions {}

/**
 * Names other rate limiters use for our options: each is a compile error whose text says what to
 * write instead (and a runtime error with the same advice), so `{ max: 5 }` never passes for
 * `{ limit: 5 }`.
 */
export interface PeerOptionNames extends LimiterPeerNames {
  /** @deprecated Not an option here: it is `ipKey`'s. */
  readonly ipv6Subnet?:
    | NotAnOption<'key by it: `key: (req) => ipKey(req.ip, { ipv6Subnet: 56 })`'>
    | undefined
  /** @deprecated Not an option: use `limit`. */
  readonly max?: NotAnOption<'use `limit` instead of `max`'> | undefined
  /** @deprecated Not an option: use `window`, with a unit: `'1m'`. */
  readonly windowMs?:
    | NotAnOption<"use `window` instead of `windowMs`: `windowMs: 60000` is `window: '1m'`">
    | undefined
  /** @deprecated Not an option: use `window`. */
  readonly timeWindow?:
    | NotAnOption<"use `window` instead of `timeWindow`: `timeWindow: '1 minute'` is `window: '1m'`">
    | undefined
  /** @deprecated Not an option: use `window`, with a unit: `'1m'`. */
  readonly ttl?:
    | NotAnOption<"use `window` instead of `ttl`, with a unit: @nestjs/throttler's `ttl: 60000` (ms; seconds before v5) is `window: '1m'`">
    | undefined
  /**
   * @deprecated Not an option: use `maxDelay` (how long a request may wait for its slot) and
   * `delayAfter` (how many of a burst go at once); waiting requests pass at the policy's rate.
   */
  readonly delayMs?:
    | NotAnOption<'use `maxDelay` and `delayAfter` (with gcra) instead of `delayMs`'>
    | undefined
  /** @deprecated Not an option: use `maxDelay`. */
  readonly maxDelayMs?: NotAnOption<'use `maxDelay` instead of `maxDelayMs`'> | undefined
  /** @deprecated Not an option: use `key`. */
  readonly keyGenerator?: NotAnOption<'use `key` instead of `keyGenerator`'> | undefined
  /** @deprecated Not an option: use `onLimited`. */
  readonly handler?: NotAnOption<'use `onLimited` instead of `handler`'> | undefined
  /** @deprecated Not an option: use `headers`. */
  readonly standardHeaders?: NotAnOption<'use `headers` instead of `standardHeaders`'> | undefined
  /** @deprecated Not an option: use `headers`. */
  readonly legacyHeaders?: NotAnOption<'use `headers` instead of `legacyHeaders`'> | undefined
}

/** What an adapter tells {@link resolveRateLimitOptions} about its framework. */
export interface AdapterSpec<Req> extends RequestAddresses<Req> {
  /** Option names the adapter reads itself, accepted besides the shared ones. */
  readonly extraOptions?: readonly string[] | undefined
}

/** Validated options plus the limiter they built. Adapters pass it to the `handle` functions. */
export interface ResolvedRateLimit<Req, OnLimited = never> {
  /** The limiter and its header policies; per request when `limits` is a function. */
  readonly limits: LimitSet | ((req: Req) => Awaitable<LimitSet>)
  /** True when the default name is used: the adapter's route scope then separates counters. */
  readonly scoped: boolean
  readonly key: (req: Req) => Awaitable<string | number | bigint>
  /** True when `key` is the default (client IP). */
  readonly defaultKey: boolean
  /** Checks each request for a likely mistake, warning once (see `warnings`); or undefined. */
  readonly watch: ((req: Req, key: string) => void) | undefined
  /** Told each scoped request's route scope, warning once on a second one; or undefined. */
  readonly scopes: ((scope: string) => void) | undefined
  readonly cost: number | ((req: Req) => Awaitable<number>)
  /** The `priority` option: a fixed rank (`undefined`: normal), or the callback. */
  readonly priority: number | ((req: Req) => Awaitable<Priority>) | undefined
  /** The `shed` option's shedder, if any. */
  readonly shed: Shedder | undefined
  readonly skip: ((req: Req) => Awaitable<boolean | undefined>) | undefined
  readonly deny: ((req: Req) => Awaitable<unknown>) | undefined
  /**
   * What a request `deny` refused comes to; undefined in shadow mode, which refuses nothing: the
   * request goes on uncounted, as a skipped one (an enforcing limiter would not count it either).
   */
  readonly denied: DeniedCheck | undefined
  readonly statusCode: number
  /** A `message` callback, when one was given. */
  readonly message: ((req: Req, decision: Decision) => Awaitable<MessageBody>) | undefined
  /** A static `message`, serialized once. */
  readonly messageBody: LimitedBody | undefined
  readonly onLimited: OnLimited | undefined
  readonly headers: readonly HeaderStandard[]
  readonly skipSuccessfulRequests: boolean
  readonly skipFailedRequests: boolean
  readonly skipAbortedRequests: boolean
  /** Settle a request's lease as soon as its client leaves, not when its handler is over. */
  readonly releaseOnDisconnect: boolean
}

// The limiter's options that do not name its policies (waiting is checked by createLimiter).
function storeOptions(
  options: RateLimitOptions<never, unknown>,
): LimiterStoreOptions & { [CLOCK]?: unknown } {
  const shared: LimiterStoreOptions & { [CLOCK]?: unknown } = {
    store: storeOf(options.store, options.redis),
    name: options.name,
    prefix: options.prefix,
    timeout: options.timeout,
    failureMode: options.failureMode,
    mode: options.mode,
    onError: options.onError,
    circuitBreaker: options.circuitBreaker,
    blockedCache: options.blockedCache,
    maxDelay: options.maxDelay as Duration | undefined,
    delayAfter: options.delayAfter as number | undefined,
  }
  const clock = (options as { [CLOCK]?: unknown })[CLOCK]
  if (clock !== undefined) shared[CLOCK] = clock
  return shared
}

// The limiter of fixed policies: the one-policy options, or a `limits` array.
function fixedLimits(options: RateLimitOptions<never, unknown>): LimitSet {
  const shared = storeOptions(options)
  const { limits } = options
  return limitSet(
    createLimiter(
      limits === undefined
        ? ({
            ...shared,
            algorithm: options.algorithm,
            limit: options.limit as number,
            window: options.window as Duration,
            burst: options.burst,
            retryAfter: options.retryAfter,
            reserve: options.reserve,
          } as LimiterOptions)
        : { ...shared, limits: limits as readonly LimitSpec[] },
    ),
  )
}

// The `priority` option (a fixed one as its rank) and the `shed` option, checked.
function priorityAndShed<Req>(
  options: RateLimitOptions<Req, unknown>,
): Pick<ResolvedRateLimit<Req>, 'priority' | 'shed'> {
  const { priority, shed } = options
  if (shed !== undefined && (shed === null || typeof shed.admit !== 'function'))
    throw new LimiterTypeError('shed', shed, 'a shedder from createShedder()')
  if (priority === undefined || typeof priority === 'function') return { priority, shed }
  return { priority: priorityRank(priority), shed }
}

/**
 * Validates an adapter's options and builds the limiter. Throws a `TypeError`/`RangeError`
 * naming the bad option, so `rateLimit(...)` fails at construction, never at the first request.
 *
 * @example
 * const rl = resolveRateLimitOptions(options, { ip: (req: Request) => req.ip })
 */
export function resolveRateLimitOptions<Req, OnLimited>(
  given: RateLimitOptions<Req, OnLimited>,
  adapter: AdapterSpec<Req>,
): ResolvedRateLimit<Req, OnLimited> {
  // Own properties only: a polluted Object.prototype must not set `skip` or `key`.
  const options = ownOptions(given)
  checkAdapterOptionNames(options, adapter.extraOptions)
  // Everything is checked before the limiter (and its store's timer) exists.
  const { cost = 1, statusCode = 429, message, limits } = options
  for (const name of ['key', 'skip', 'deny', 'onLimited'] as const)
    optionalFunction(name, options[name])
  // The policies are checked here (a function's, per request), before any store exists.
  if (typeof limits !== 'function') checkCost(cost, policySetOf(options, '', {}).maxCost)
  else if (typeof cost === 'number') checkCost(cost, Number.MAX_SAFE_INTEGER)
  checkStatusCode(statusCode)
  const { priority, shed } = priorityAndShed(options)
  const body =
    message === undefined || typeof message === 'function' ? undefined : messageBody(message)
  const headers = headerStandards(options.headers)
  const skipSuccessfulRequests = optionalBoolean(
    'skipSuccessfulRequests',
    options.skipSuccessfulRequests,
  )
  const skipFailedRequests = optionalBoolean('skipFailedRequests', options.skipFailedRequests)
  const skipAbortedRequests = optionalBoolean('skipAbortedRequests', options.skipAbortedRequests)
  const releaseOnDisconnect = optionalBoolean('releaseOnDisconnect', options.releaseOnDisconnect)
  const warnings = options.warnings === undefined || optionalBoolean('warnings', options.warnings)

  const fixed = typeof limits === 'function' ? undefined : fixedLimits(options)
  const getIp = adapter.ip
  const keyed = options.key !== undefined
  const shownName = fixed?.limiter.name ?? options.name ?? 'limits'
  return Object.freeze({
    limits: fixed ?? limitsPerRequest(limits as LimitsFunction<Req>, storeOptions(options)),
    scoped: options.name === undefined,
    key: options.key ?? ((req: Req) => ipKey(getIp(req))),
    defaultKey: !keyed,
    watch: warnings ? requestWatch(adapter, shownName, keyed) : undefined,
    scopes: warnings && options.name === undefined ? scopeWatch(shownName) : undefined,
    cost,
    priority,
    shed,
    skip: options.skip,
    deny: options.deny,
    denied: options.mode === 'shadow' ? undefined : DENIED,
    statusCode,
    message:
      typeof message === 'function'
        ? (message as (req: Req, decision: Decision) => Awaitable<MessageBody>)
        : undefined,
    messageBody: body,
    onLimited: options.onLimited,
    headers,
    skipSuccessfulRequests,
    skipFailedRequests,
    skipAbortedRequests,
    releaseOnDisconnect,
  })
}
