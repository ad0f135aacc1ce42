// The inspector's options, checked once at construction.
import { createHash, createHmac } from 'node:crypto'
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
  /**
   * A secret of at least 32 characters, the same in every process that serves the page: keys
   * the default labels (HMAC-SHA-256, so no one can compute two keys that share a label) and
   * signs the CSRF tokens (a cookie and form planted together are refused). Without it, labels
   * are a plain SHA-256 prefix and the token a plain double submit.
   */
  readonly secret?: string | undefined
}

export interface ResolvedOptions<H> {
  readonly limiters: readonly Limiter[]
  readonly authorize: Authorize<H> | undefined
  readonly actions: boolean
  readonly mask: ((key: string) => string) | undefined
  /** Whether `mask` is the default (`hashKey`), whose labels have a shape of their own. */
  readonly defaultMask: boolean
  readonly topK: number
  readonly redis: ((key: string, args: string[]) => Promise<unknown>) | undefined
  readonly redisPrefix: string
  readonly secret: string | undefined
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
  const { secret } = options
  if (secret !== undefined && (typeof secret !== 'string' || secret.length < 32))
    throw new LimiterTypeError('secret', secret, 'a string of at least 32 characters')
  const redis = store === undefined ? undefined : senderOf(store)
  if (store !== undefined && redis === undefined)
    throw new LimiterTypeError('store', store, 'a RedisStore, or an ioredis or node-redis client')
  return {
    limiters,
    authorize,
    actions: actions === true,
    mask: maskOf(maskKey, secret),
    defaultMask: maskKey === undefined || maskKey === true,
    topK,
    redis,
    redisPrefix: options.redisPrefix ?? 'rl:inspector:',
    secret,
  }
}

function maskOf(
  maskKey: InspectorOptions['maskKey'],
  secret: string | undefined,
): ((key: string) => string) | undefined {
  if (maskKey === false) return undefined
  if (typeof maskKey === 'function') return maskKey
  return (key) => hashKey(key, secret)
}

/**
 * The default label of a key: `k:`, the first 16 hex digits of its SHA-256 (HMAC-SHA-256 keyed
 * by `secret`, the inspector's `secret` option, when given), then `…`.
 */
export function hashKey(key: string, secret?: string): string {
  const hash =
    secret === undefined
      ? createHash('sha256').update(key)
      : createHmac('sha256', secret).update(`limiter-inspector-label:${key}`)
  return `k:${hash.digest('hex').slice(0, LABEL_DIGITS)}…`
}

const LABEL_DIGITS = 16

/** Whether `text` has the shape of a default label (the 8-digit ones of older versions too). */
export function isHashLabel(text: string): boolean {
  return /^k:[0-9a-f]{8,64}…$/.test(text)
}
