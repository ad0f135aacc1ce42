// @RateLimit and @SkipRateLimit: metadata the guard reads (through Nest's Reflector).
import { SetMetadata } from '@nestjs/common'
import type { RateLimitDecoratorOptions, RequestLike } from './types.js'

/** Metadata key of {@link RateLimit}. */
export const RATE_LIMIT = '@limiter/nest:rate-limit'
/** Metadata key of {@link SkipRateLimit}. */
export const SKIP_RATE_LIMIT = '@limiter/nest:skip'

type Decorator = ClassDecorator & MethodDecorator

/**
 * Limits a controller's handlers or one handler: the options go over the class's `@RateLimit`
 * (for a handler) and over `LimiterModule.forRoot`'s. Each handler counts on its own, also under
 * a class-level `@RateLimit`, unless handlers share a `name`. `@RateLimit()` with no options
 * limits with forRoot's policy, per handler.
 *
 * @example
 * @RateLimit({ limit: 5, window: '15m', algorithm: 'sliding-log' })
 * @Post('login')
 * login() {}
 */
export function RateLimit<Req = RequestLike>(
  options: RateLimitDecoratorOptions<Req> = {},
): Decorator {
  return SetMetadata(RATE_LIMIT, options) as Decorator
}

/**
 * Exempts a controller or a handler from the guard. `@SkipRateLimit(false)` on a handler limits it
 * again under a skipping class.
 *
 * @example
 * @SkipRateLimit()
 * @Get('health')
 * health() {}
 */
export function SkipRateLimit(skip = true): Decorator {
  return SetMetadata(SKIP_RATE_LIMIT, skip) as Decorator
}
