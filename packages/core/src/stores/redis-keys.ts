// Redis key names: namespace plus the user key inside one hash tag.
import { createHash } from 'node:crypto'
import { LimiterTypeError } from '../errors.js'
import type { Algorithm } from '../policy.js'

/** User keys whose encoded form is longer than this many bytes are replaced by a hash. */
export const MAX_TAG_BYTES = 200

/**
 * Encodes a user key for use inside a `{hash tag}`: `%`, `{` and `}` are percent-escaped, so
 * distinct keys stay distinct and no key can close the tag early. Keys longer than
 * {@link MAX_TAG_BYTES} bytes become `%H` + base64url(SHA-256), a form escaping never yields.
 */
export function encodeTag(key: string): string {
  const escaped = key.replace(/[%{}]/g, (c) => (c === '%' ? '%25' : c === '{' ? '%7B' : '%7D'))
  if (escaped.length * 3 <= MAX_TAG_BYTES || Buffer.byteLength(escaped) <= MAX_TAG_BYTES)
    return escaped
  return `%H${createHash('sha256').update(key).digest('base64url')}`
}

/** Validates a user key: any non-empty string. */
export function checkKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key.length === 0) {
    throw new LimiterTypeError('key', key, 'a non-empty string', 'ERR_LIMITER_KEY')
  }
}

/** The Redis keys one request touches: all share the `{tag}` of the user key. */
export function redisKeys(algorithm: Algorithm, namespace: string, key: string): string[] {
  const base = `${namespace}{${encodeTag(key)}}`
  return algorithm === 'sliding-log' ? [base, `${base}:t`] : [base]
}
