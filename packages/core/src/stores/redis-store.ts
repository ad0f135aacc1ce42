// RedisStore: one EVALSHA per decision on any ioredis-compatible client (standalone or Cluster).
import { LimiterError, LimiterTypeError } from '../errors.js'
import type { LuaScript } from './lua-script.js'
import { redisKeys } from './redis-keys.js'
import { SCRIPTS } from './scripts.generated.js'
import type { Store, StoreCall, StoreDecision } from './store.js'

/**
 * The part of an ioredis `Redis` or `Cluster` client (or iovalkey) the store uses. Checked by
 * shape, never with `instanceof`, so your copy of the client library may differ from ours.
 */
export interface RedisClientLike {
  evalsha(sha1: string, numkeys: number, ...args: Array<string | number>): Promise<unknown>
  eval(script: string, numkeys: number, ...args: Array<string | number>): Promise<unknown>
  del(...keys: string[]): Promise<unknown>
}

/** Options for {@link RedisStore}. */
export interface RedisStoreOptions {
  /** An ioredis `Redis` or `Cluster` client (or a compatible one). */
  readonly client: RedisClientLike
}

// In clock-injected tests keys live this much longer in real time than the injected clock says,
// so Redis never expires state the test's clock still considers live.
const TEST_TTL_SLACK_MS = 3_600_000

/**
 * A store on Redis. Each decision is one EVALSHA of the algorithm's script (EVAL once on
 * NOSCRIPT, which caches it again); time comes from Redis `TIME`, so app servers with skewed
 * clocks agree. The client's settings and commands are never modified; a client with no
 * `error` listener gets a silent one, so an outage does not print a line per reconnect.
 *
 * @example
 * const store = new RedisStore({ client: new Redis(process.env.REDIS_URL) })
 */
export class RedisStore implements Store {
  readonly client: RedisClientLike

  constructor(options: RedisStoreOptions) {
    const client = (options as { client?: unknown } | undefined)?.client
    if (!isRedisClient(client)) {
      throw new LimiterTypeError(
        'client',
        client,
        'an ioredis Redis or Cluster client (with evalsha, eval and del)',
      )
    }
    this.client = client
    // ioredis prints "Unhandled error event" for every failed reconnect when a client has no
    // error listener: one line per attempt for the whole outage. The limiter reports failures
    // through onError instead, so give a client without a listener a silent one.
    const events = client as unknown as {
      on?: (event: string, fn: () => void) => void
      listenerCount?: (event: string) => number
    }
    if (
      typeof events.on === 'function' &&
      typeof events.listenerCount === 'function' &&
      events.listenerCount('error') === 0
    ) {
      events.on('error', () => {})
    }
  }

  async consume(call: StoreCall): Promise<StoreDecision> {
    const reply = (await this.#run(call, 'c')) as [number, number, number, number, string?]
    return {
      allowed: reply[0] === 1,
      remaining: reply[1],
      resetMs: reply[2],
      retryAfterMs: reply[3],
      ticket: reply[4] === undefined || reply[4] === '' ? undefined : reply[4],
    }
  }

  async refund(call: StoreCall): Promise<void> {
    await this.#run(call, 'r')
  }

  async reset(call: Omit<StoreCall, 'cost'>): Promise<void> {
    await this.client.del(...redisKeys(call.policy.algorithm, call.namespace, call.key))
  }

  async #run(call: StoreCall, op: 'c' | 'r'): Promise<unknown> {
    // A disconnected ioredis client queues commands until it reconnects (its offline queue):
    // fail at once instead, so nothing piles up during an outage and nothing stale runs later.
    const status = (this.client as { status?: unknown }).status
    if (status === 'reconnecting' || status === 'close' || status === 'end') {
      throw new LimiterError('ERR_LIMITER_STORE', `Redis client is ${status}`)
    }
    const { policy } = call
    const script: LuaScript = SCRIPTS[policy.algorithm]
    const keys = redisKeys(policy.algorithm, call.namespace, call.key)
    const args: Array<string | number> = [
      ...keys,
      call.nowMs === undefined ? '' : call.nowMs,
      call.nowMs === undefined ? 0 : TEST_TTL_SLACK_MS,
      policy.limit,
      policy.windowMs,
      policy.burst,
      call.cost,
      op,
    ]
    if (policy.algorithm === 'sliding-log') args.push(call.ticket ?? '')
    try {
      return await this.client.evalsha(script.sha1, script.numberOfKeys, ...args)
    } catch (error) {
      if (!isNoScript(error)) throw error
      // EVAL runs the script and caches it again; the next call's EVALSHA finds it.
      return await this.client.eval(script.source, script.numberOfKeys, ...args)
    }
  }
}

function isNoScript(error: unknown): boolean {
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
