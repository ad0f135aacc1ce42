// @RateLimit and @SkipRateLimit: metadata the guard reads (through Nest's Reflector).
import { LimiterRangeError, LimiterTypeError } from '@limiter/core'
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

const SKIP = '@SkipRateLimit'

// `skip` as a boolean. @nestjs/throttler's `@SkipThrottle({ default: true })` skips the throttler
// of each name given true; here a handler has one limiter (its `limits` are decided together),
// which `default` names, and another name is refused: one policy cannot be skipped alone.
function skipOf(skip: unknown): boolean {
  if (typeof skip === 'boolean') return skip
  if (skip === null || typeof skip !== 'object' || Array.isArray(skip))
    throw new LimiterTypeError(SKIP, skip, "true, false, or @nestjs/throttler's { default: true }")
  const other = Object.keys(skip).find((name) => name !== 'default')
  if (other !== undefined)
    throw new LimiterRangeError(
      `${SKIP}({ ${other} })`,
      (skip as Record<string, unknown>)[other],
      `names a throttler, but a handler here has one limiter, whose \`limits\` are decided together, so one of them cannot be skipped alone: write @SkipRateLimit() to skip the handler's limiter, or give the handler a @RateLimit({ limits: [...] }) without '${other}'`,
    )
  const value = (skip as Record<string, unknown>).default
  if (typeof value !== 'boolean')
    throw new LimiterTypeError(`${SKIP}({ default })`, value, 'true or false')
  return value
}

/**
 * Exempts a controller or a handler from the guard. `@SkipRateLimit(false)` on a handler limits it
 * again under a skipping class. `@nestjs/throttler`'s `{ default: true }` and `{ default: false }`
 * mean the same; another throttler's name (`{ short: true }`) throws, at decoration time.
 *
 * @example
 * @SkipRateLimit()
 * @Get('health')
 * health() {}
 */
export function SkipRateLimit(skip: boolean | { readonly default: boolean } = true): Decorator {
  return SetMetadata(SKIP_RATE_LIMIT, skipOf(skip)) as Decorator
}
