// Checks for single options, each throwing a TypeError/RangeError that names the option.
import { LimiterRangeError, LimiterTypeError } from '../common/errors.js'
import { checkOptionNames } from '../common/option-names.js'
import { isCost } from '../policies/policy.js'
import { isRedisClient } from '../stores/redis-client.js'
import { CLIENT_EXPECTED } from '../stores/redis-drivers/index.js'
import { RedisStore, type RedisStoreClient } from '../stores/redis-store.js'
import type { Store } from '../stores/store.js'
import { HEADER_STANDARDS, type HeaderStandard } from './headers.js'
import { type LimitedBody, messageBodyOf } from './problem.js'

export type { LimitedBody } from './problem.js'

const SHARED: readonly string[] =
  'algorithm limit window burst retryAfter reserve priority shed maxDelay delayAfter limits store redis name prefix key cost skip deny mode statusCode message onLimited headers skipSuccessfulRequests skipFailedRequests skipAbortedRequests releaseOnDisconnect warnings onError failureMode timeout circuitBreaker blockedCache'.split(
    ' ',
  )
const SHARED_SET: ReadonlySet<string> = new Set(SHARED)

// express-rate-limit v8's `ipv6Subnet` is a middleware option; here it is the key helper's.
const IPV6_SUBNET =
  "is not an option (here it is `ipKey`'s: key by it, `key: (req) => ipKey(req.ip, { ipv6Subnet: 56 })`, with your prefix length (56, a key per /56, is the default) and your framework's client address for `req.ip`; `ipKey` comes from this package)"

/**
 * Rejects option names that are neither shared nor the adapter's own, suggesting what was likely
 * meant (a peer library's name, or the closest spelling).
 */
export function checkAdapterOptionNames(options: object, extra: readonly string[] = []): void {
  if (Object.hasOwn(options, 'ipv6Subnet') && !extra.includes('ipv6Subnet'))
    throw new LimiterRangeError(
      'ipv6Subnet',
      (options as { ipv6Subnet?: unknown }).ipv6Subnet,
      IPV6_SUBNET,
    )
  checkOptionNames(options, extra.length === 0 ? SHARED_SET : new Set([...SHARED, ...extra]))
}

export function optionalFunction(option: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'function') {
    throw new LimiterTypeError(option, value, 'a function')
  }
}

export function optionalBoolean(option: string, value: unknown): boolean {
  if (value !== undefined && typeof value !== 'boolean') {
    throw new LimiterTypeError(option, value, 'true or false')
  }
  return value === true
}

/** A static `cost`: an integer from 1 to the policy's burst. */
export function checkCost(cost: unknown, burst: number): void {
  if (typeof cost === 'function') return
  if (typeof cost !== 'number') throw new LimiterTypeError('cost', cost, 'an integer or a function')
  if (!isCost(cost, 1, burst)) {
    const expected = `must be an integer from 1 to burst (${burst}); use \`skip\` to let a request through uncounted`
    throw new LimiterRangeError('cost', cost, expected)
  }
}

export function checkStatusCode(statusCode: unknown): number {
  if (typeof statusCode !== 'number') {
    throw new LimiterTypeError('statusCode', statusCode, 'an HTTP status code')
  }
  if (!Number.isInteger(statusCode) || statusCode < 400 || statusCode > 599) {
    throw new LimiterRangeError('statusCode', statusCode, 'must be an integer from 400 to 599')
  }
  return statusCode
}

/** The `headers` option as a list of distinct standards. */
export function headerStandards(value: unknown): readonly HeaderStandard[] {
  if (value === undefined) return Object.freeze(['draft-10'])
  if (value === false) return Object.freeze([])
  const expected = `${HEADER_STANDARDS.map((s) => `'${s}'`).join(', ')}, an array of these, or false`
  if (typeof value !== 'string' && !Array.isArray(value)) {
    throw new LimiterTypeError('headers', value, expected)
  }
  const list: unknown[] = Array.isArray(value) ? value : [value]
  for (const item of list) {
    if (!HEADER_STANDARDS.includes(item as HeaderStandard)) {
      throw new LimiterRangeError('headers', item, `must be ${expected}`)
    }
  }
  const standards = [...new Set(list as HeaderStandard[])]
  if (standards.includes('draft-10') && standards.some((s) => s === 'draft-7' || s === 'draft-6')) {
    const why =
      "'draft-10' cannot be sent with 'draft-7' or 'draft-6': they give `RateLimit`/`RateLimit-Policy` different syntax"
    throw new LimiterRangeError('headers', value, why)
  }
  return Object.freeze(standards)
}

/** A static `message` serialized once: a string as text, an object as JSON. */
export function messageBody(value: unknown): LimitedBody {
  const body = messageBodyOf(value)
  if (body === undefined) {
    throw new LimiterTypeError(
      'message',
      value,
      'a string, an object JSON.stringify can serialize, or a function',
    )
  }
  return body
}

/** `store`, or a `RedisStore` on the `redis` client; both at once is an error. */
export function storeOf(
  store: Store | undefined,
  redis: RedisStoreClient | undefined,
): Store | undefined {
  if (redis === undefined) return store
  if (store !== undefined) {
    throw new LimiterRangeError('redis', redis, 'pass either `store` or `redis`, not both')
  }
  if (!isRedisClient(redis)) {
    throw new LimiterTypeError('redis', redis, CLIENT_EXPECTED)
  }
  return new RedisStore({ client: redis })
}
