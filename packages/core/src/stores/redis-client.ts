// The Redis client a RedisStore drives: its shape, and how its errors read.
import { LimiterError } from '../errors.js'

/**
 * The part of an ioredis `Redis` or `Cluster` client (or iovalkey) the store uses. Checked by
 * shape, never with `instanceof`, so your copy of the client library may differ from ours.
 */
export interface RedisClientLike {
  evalsha(sha1: string, numkeys: number, ...args: Array<string | number>): Promise<unknown>
  eval(script: string, numkeys: number, ...args: Array<string | number>): Promise<unknown>
  del(...keys: string[]): Promise<unknown>
}

// A server without PEXPIRETIME (before Redis 7.0) fails every gcra-family and fixed-window
// script: say what to do instead of only relaying Redis's words.
export function tooOld(error: unknown): unknown {
  if (!(error instanceof Error) || !/unknown (redis )?command/i.test(error.message)) return error
  return new LimiterError(
    'ERR_LIMITER_STORE',
    `Redis refused a command the limiter's scripts need (PEXPIRETIME, SET ... PXAT): use Redis 7.0 or newer, or Valkey 7.2 or newer (${error.message})`,
    { cause: error },
  )
}

export function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT')
}

/** Whether `value` has the methods a {@link RedisStore} needs. */
export function isRedisClient(value: unknown): value is RedisClientLike {
  if (value === null || typeof value !== 'object') return false
  const c = value as Record<string, unknown>
  return (
    typeof c.evalsha === 'function' && typeof c.eval === 'function' && typeof c.del === 'function'
  )
}
