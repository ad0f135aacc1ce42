// The inspector's options, checked once at construction.
import { createHash } from 'node:crypto'
import type { Limiter, RedisStore } from '@limiter/core'
import { LimiterRangeError, LimiterTypeError } from '@limiter/core'
import { senderOf } from './redis-sync.js'

/**
 * Who may see the page: `true` lets the request in, `false` answers 403 (known, not allowed),
 * `null` or `undefined` answers 401 (no credentials). `hostRequest` is the framework's own
 * request (Express `req`, Koa `ctx`, Hono `c`...), so `req.user` and the like can be read.
 */
export type Authorize<H> = (
  request: Request,
  hostRequest: H,
) => boolean | null | undefined | Promise<boolean | null | undefined>

export interface InspectorOptions<H = unknown> {
  /** The limiters to show (each policy of each). */
  readonly limiters: readonly Limiter[]
  /**
   * Where to merge the top refused keys across processes: a `RedisStore`, or an ioredis or
   * node-redis client. Without it, the page shows this process's own.
   */
  readonly store?: RedisStore | object | undefined
  /** Required unless `unsafe: true`. */
  readonly authorize?: Authorize<H> | undefined
  /** Serve the page to anyone (no `authorize`): for local development only; warns once. */
  readonly unsafe?: boolean | undefined
  /** Enables block, unblock/reset and the threshold preview (POSTs with a CSRF token). Default false. */
  readonly actions?: boolean | undefined
  /**
   * How keys are shown: by default a hash prefix (`k:3f9a0c12…`); `false` shows raw keys; a
   * function maps a key to its label.
   */
  readonly maskKey?: boolean | ((key: string) => string) | undefined
  /** Counters per policy per minute in the heavy-hitter summaries (default 256, 8 to 1024). */
  readonly topK?: number | undefined
  /** Where the shared summaries live in Redis (default `'rl:inspector:'`). */
  readonly redisPrefix?: string | undefined
}

export interface ResolvedOptions<H> {
  readonly limiters: readonly Limiter[]
  readonly authorize: Authorize<H> | undefined
  readonly actions: boolean
  readonly mask: ((key: string) => string) | undefined
  readonly topK: number
  readonly redis: ((key: string, args: string[]) => Promise<unknown>) | undefined
  readonly redisPrefix: string
}

export function resolveOptions<H>(options: InspectorOptions<H>): ResolvedOptions<H> {
  if (options === null || typeof options !== 'object')
    throw new LimiterTypeError('options', options, 'an object')
  const { limiters, authorize, unsafe, actions, maskKey, topK = 256, store } = options
  if (!Array.isArray(limiters) || limiters.length === 0)
    throw new LimiterTypeError('limiters', limiters, 'a non-empty array of limiters')
  if (authorize !== undefined && typeof authorize !== 'function')
    throw new LimiterTypeError('authorize', authorize, 'a function')
  if (authorize === undefined && unsafe !== true)
    throw new LimiterTypeError(
      'authorize',
      authorize,
      'a function deciding who may see the page (or `unsafe: true`, for local development only)',
    )
  if (typeof topK !== 'number' || !Number.isInteger(topK) || topK < 8 || topK > 1024)
    throw new LimiterRangeError('topK', topK, 'must be an integer from 8 to 1024')
  const redis = store === undefined ? undefined : senderOf(store)
  if (store !== undefined && redis === undefined)
    throw new LimiterTypeError('store', store, 'a RedisStore, or an ioredis or node-redis client')
  return {
    limiters,
    authorize,
    actions: actions === true,
    mask: maskKey === false ? undefined : typeof maskKey === 'function' ? maskKey : hashKey,
    topK,
    redis,
    redisPrefix: options.redisPrefix ?? 'rl:inspector:',
  }
}

/** The default label of a key: `k:` and the first 8 hex digits of its SHA-256, then `…`. */
export function hashKey(key: string): string {
  return `k:${createHash('sha256').update(key).digest('hex').slice(0, 8)}…`
}
