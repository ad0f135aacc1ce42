// @limiter/core public API, for users: the limiter, its stores, its errors and decisions, key
// helpers. What framework adapters use lives on the `@limiter/core/http` subpath.

export { type Duration, parseDuration } from './common/duration.js'
export {
  LimiterError,
  type LimiterErrorCode,
  type LimiterErrorOptions,
  LimiterRangeError,
  LimiterTypeError,
} from './common/errors.js'
export type {
  Decision,
  DecisionReason,
  DecisionSource,
  PolicyDecision,
} from './decision/decision.js'
export type { HeaderStandard } from './http/headers.js'
export { type IpKeyOptions, ipKey, routeKey, userKey } from './http/key-helpers.js'
export {
  type AcquireOptions,
  type ConsumeOptions,
  createLimiter,
  type ErrorContext,
  type FailureMode,
  type Limiter,
  type LimiterOptions,
} from './limiter/create-limiter.js'
export { failureOf } from './limiter/failure.js'
export { closeLimiters } from './limiter/owed.js'
export type {
  FailedOperation,
  LimiterBaseOptions,
  LimiterPeerNames,
  LimiterStoreOptions,
  OnePolicy,
  OnePolicyOf,
  SeveralPolicies,
  WaitingOptions,
} from './limiter/types.js'
export {
  BLOCK_CHANNEL,
  type BlockEvent,
  CIRCUIT_CHANNEL,
  type CircuitEvent,
  DECISION_CHANNEL,
  type DecisionEvent,
  // internal, for @limiter/inspector: not part of the public API (see their docs)
  type DecisionObserver,
  FAILURE_CHANNEL,
  type FailureEvent,
  observeDecisions,
  type StoreKind,
} from './observability/events.js'
export { MAX_LIMITS } from './policies/limits.js'
export { defaultName } from './policies/naming.js'
export {
  ALGORITHMS,
  type Algorithm,
  type DefaultAlgorithm,
  definePolicy,
  type LimitSpec,
  MAX_CONCURRENCY_LIMIT,
  MAX_LOG_LIMIT,
  MAX_UNITS,
  type NamedPolicy,
  type NotAnOption,
  type Policy,
  type PolicyOptions,
  type PolicyOptionsOf,
  RATE_ALGORITHMS,
  type RateAlgorithm,
  type ReserveShares,
  type ReservingAlgorithm,
} from './policies/policy.js'
export type { LuaScript } from './stores/lua-script.js'
export { MemoryStore, type MemoryStoreOptions } from './stores/memory-store.js'
export { encodeTag, MAX_TAG_BYTES, redisKeys } from './stores/redis-keys.js'
export {
  type NodeRedisClientLike,
  type NodeRedisClusterLike,
  type RedisClientLike,
  RedisStore,
  type RedisStoreClient,
  type RedisStoreOptions,
} from './stores/redis-store.js'
export { SCRIPTS } from './stores/scripts.generated.js'
export { isStore, type Store, type StoreCall, type StoreDecision } from './stores/store.js'
