// @limiter/nest: LimiterModule, LimiterGuard and @RateLimit / @SkipRateLimit over @limiter/core's HTTP glue.
export {
  closeLimiters,
  type Decision,
  type HeaderStandard,
  type IpKeyOptions,
  ipKey,
  MemoryStore,
  RedisStore,
  routeKey,
  userKey,
} from '@limiter/core'
export { RateLimit, SkipRateLimit } from './decorators.js'
export { RateLimitException } from './exception.js'
export { LimiterGuard } from './guard.js'
export { LimiterModule, type LimiterModuleAsyncOptions } from './module.js'
export type {
  LimiterModuleOptions,
  OnLimited,
  RateLimitDecoratorOptions,
  RateLimitOptions,
  RequestLike,
} from './types.js'
