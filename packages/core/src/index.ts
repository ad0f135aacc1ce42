// @limiter/core public API.
export type { Decision } from './decision.js'
export { type Duration, parseDuration } from './duration.js'
export {
  LimiterError,
  type LimiterErrorCode,
  LimiterRangeError,
  LimiterTypeError,
} from './errors.js'
export {
  createLimiter,
  defaultName,
  type ErrorContext,
  type FailureMode,
  type Limiter,
  type LimiterOptions,
} from './limiter.js'
export {
  ALGORITHMS,
  type Algorithm,
  definePolicy,
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
