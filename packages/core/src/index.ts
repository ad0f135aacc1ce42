// @limiter/core public API.
export type { Decision, DecisionSource } from './decision.js'
export { type Duration, parseDuration } from './duration.js'
export {
  LimiterError,
  type LimiterErrorCode,
  type LimiterErrorOptions,
  LimiterRangeError,
  LimiterTypeError,
} from './errors.js'
export { failureOf } from './failure.js'
export {
  beginCheck,
  checkRequest,
  isThenable,
  type MaybePromise,
  type RateLimitCheck,
  withCheck,
} from './http/check.js'
export {
  applyHeaders,
  type CheckOutcome,
  type FinishTarget,
  type HeaderTarget,
  type LimitedResponse,
  limitedResponse,
  refundOnce,
  refundWhenDone,
  settleCheck,
} from './http/handle.js'
export {
  draft6Headers,
  draft7Headers,
  draft10Headers,
  formatHeaders,
  HEADER_STANDARDS,
  type HeaderPair,
  type HeaderPolicy,
  type HeaderStandard,
  headerPolicy,
  legacyHeaders,
  resetSeconds,
  retryAfterHeader,
  retryAfterSeconds,
  sfString,
} from './http/headers.js'
export {
  checkIpv6Subnet,
  declaredMethods,
  declaredRouteKey,
  type IpKeyOptions,
  ipKey,
  routeKey,
  userKey,
} from './http/keys.js'
export { type HeaderValue, mergeHeaders } from './http/merge-headers.js'
export {
  type AdapterSpec,
  type Awaitable,
  type LimitedBody,
  type Message,
  type MessageBody,
  type PeerOptionNames,
  type RateLimitOptions,
  type ResolvedRateLimit,
  resolveRateLimitOptions,
} from './http/options.js'
export {
  PROBLEM_JSON,
  problemBody,
  QUOTA_EXCEEDED_TYPE,
  unavailableBody,
  windowText,
} from './http/problem.js'
export {
  createLimiter,
  type ErrorContext,
  type FailureMode,
  type Limiter,
  type LimiterOptions,
} from './limiter.js'
export { defaultName } from './naming.js'
export {
  ALGORITHMS,
  type Algorithm,
  definePolicy,
  MAX_LOG_LIMIT,
  MAX_UNITS,
  type Policy,
  type PolicyOptions,
} from './policy.js'
export type { LuaScript } from './stores/lua-script.js'
export { MemoryStore, type MemoryStoreOptions } from './stores/memory-store.js'
export { encodeTag, MAX_TAG_BYTES, redisKeys } from './stores/redis-keys.js'
export { type RedisClientLike, RedisStore, type RedisStoreOptions } from './stores/redis-store.js'
export { SCRIPTS } from './stores/scripts.generated.js'
export { isStore, type Store, type StoreCall, type StoreDecision } from './stores/store.js'
