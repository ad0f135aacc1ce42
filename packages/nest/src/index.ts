// @limiter/nest: LimiterModule, LimiterGuard and @RateLimit / @SkipRateLimit over @limiter/core's HTTP glue.
export {
  type Decision,
  type HeaderStandard,
  type IpKeyOptions,
  ipKey,
  MemoryStore,
  RedisStore,
  routeKey,
  userKey,
} from '@limiter/core'
export { RATE_LIMIT, RateLimit, SKIP_RATE_LIMIT, SkipRateLimit } from './decorators.js'
export { RateLimitException } from './exception.js'
export { LimiterGuard } from './guard.js'
export { LimiterRegistry } from './limiters.js'
export { LIMITER_OPTIONS, LimiterModule, type LimiterModuleAsyncOptions } from './module.js'
export type {
  LimiterModuleOptions,
  OnLimited,
  RateLimitDecoratorOptions,
  RateLimitOptions,
  RequestLike,
} from './types.js'
