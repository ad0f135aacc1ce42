// The package's shared types: the request the guard sees, the options, `onLimited`.
import type { IncomingHttpHeaders } from 'node:http'
import type { Decision } from '@limiter/core'
import type { RateLimitOptions as CoreOptions, PartialOptions } from '@limiter/core/http'
import type { ExecutionContext } from '@nestjs/common'

/**
 * What the guard reads of a request: Express's `req` on `@nestjs/platform-express`, Fastify's
 * `request` on `@nestjs/platform-fastify`. Annotate a callback with your platform's type
 * (`key: (req: Request) => ...`) to read more.
 */
export interface RequestLike {
  /** The client address, as the platform resolves it (its trust-proxy setting applied). */
  readonly ip?: string | undefined
  readonly headers: IncomingHttpHeaders
  readonly socket?: { readonly remoteAddress?: string | undefined } | undefined
  /** The decision of the limiter this request passed through, set by the guard. */
  rateLimit?: Decision
}

// `req.rateLimit` on either platform's request type, without importing another adapter: type
// declarations only (nothing is imported at runtime, and a platform not installed is not needed).
declare global {
  namespace Express {
    interface Request {
      /** The decision of the last rate limiter this request passed through. */
      rateLimit?: Decision
    }
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The decision of the last rate limiter this request passed through. */
    rateLimit?: Decision
  }
}

/**
 * Full control of a limited response: throw an exception of your own (Nest's exception layer
 * renders it), or send the response yourself. Returning without either sends the default. The
 * rate-limit headers and `Retry-After` are already set.
 */
export type OnLimited = (context: ExecutionContext, decision: Decision) => unknown

/** The shared options, typed with the platform's request (see {@link RequestLike}). */
export type RateLimitOptions<Req = RequestLike> = CoreOptions<Req, OnLimited>

/**
 * `LimiterModule.forRoot` options: defaults for every `@RateLimit` (`store` or `redis`,
 * `headers`, `failureMode`, a `window`...). With a policy (`limit` or `limits`) they are also
 * the limiter of every route without `@RateLimit`, counted together.
 */
export type LimiterModuleOptions<Req = RequestLike> = PartialOptions<Req, OnLimited>

/** `@RateLimit` options: any option, over the class's and then `forRoot`'s. */
export type RateLimitDecoratorOptions<Req = RequestLike> = PartialOptions<Req, OnLimited>
