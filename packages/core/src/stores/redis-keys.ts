// Redis key names: namespace plus the user key inside one hash tag.
import { createHash } from 'node:crypto'
import { LimiterTypeError } from '../common/errors.js'
import type { Algorithm } from '../policies/policy.js'
import { slotTag } from './cluster-slot.js'

/** User keys whose encoded form is longer than this many bytes are replaced by a hash. */
export const MAX_TAG_BYTES = 200

// A UTF-16 surrogate without its other half. It has no UTF-8 form: Node encodes it as U+FFFD.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

/**
 * Encodes a user key for use inside a `{hash tag}`: `%`, `{` and `}` are percent-escaped, so
 * distinct keys stay distinct and no key can close the tag early; a lone UTF-16 surrogate (which
 * would reach Redis as U+FFFD, merging distinct keys) becomes `%u` + its 4 hex digits. Keys longer
 * than {@link MAX_TAG_BYTES} bytes become `%H` + base64url(SHA-256 of the key), or `%h` + that of
 * the escaped key when the key holds a lone surrogate: forms escaping never yields.
 */
export function encodeTag(key: string): string {
  // The usual key (short, no `%{}`, no surrogates) is its own tag: one scan, no regex.
  if (key.length * 3 <= MAX_TAG_BYTES && isPlain(key)) return key
  let escaped = key.replace(/[%{}]/g, (c) => (c === '%' ? '%25' : c === '{' ? '%7B' : '%7D'))
  // String#isWellFormed (Node 20+) is native and far cheaper than the regex on every decision.
  const wellFormed = (escaped as unknown as { isWellFormed(): boolean }).isWellFormed()
  if (!wellFormed)
    escaped = escaped.replace(LONE_SURROGATE, (c) => `%u${c.charCodeAt(0).toString(16)}`)
  if (escaped.length * 3 <= MAX_TAG_BYTES || Buffer.byteLength(escaped) <= MAX_TAG_BYTES)
    return escaped
  // Well-formed keys hash as they always did, so stored names do not change; the others hash
  // their escaped form under another marker, so the two can never meet.
  return wellFormed
    ? `%H${createHash('sha256').update(key).digest('base64url')}`
    : `%h${createHash('sha256').update(escaped).digest('base64url')}`
}

// No `%`, `{`, `}` and no UTF-16 surrogate (so no lone one either).
function isPlain(key: string): boolean {
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i)
    if (c === 0x25 || c === 0x7b || c === 0x7d || (c >= 0xd800 && c <= 0xdfff)) return false
  }
  return true
}

/** Validates a user key: any non-empty string. */
export function checkKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key.length === 0) {
    throw new LimiterTypeError('key', key, 'a non-empty string', 'ERR_LIMITER_KEY')
  }
}

/** The Redis key of a user key's state: `namespace` + `{tag}`. */
export function redisKeys(_algorithm: Algorithm, namespace: string, key: string): string[] {
  return [baseKey(namespace, encodeTag(key))]
}

/** An algorithm's key: `namespace` + `{tag}` (`tag` from {@link encodeTag}). */
export function baseKey(namespace: string, tag: string): string {
  return `${namespace}{${tag}}`
}

/**
 * The block marker of a namespace's keys (lua/lib/block.lua): a key that lives while any block on
 * them (written through the store) lasts, so the scripts that decide requests look for blocks
 * only then. `namespace + 'blocked'`, under the limiter's `prefix` like all its keys (a namespace
 * ends with ':', so no state or block key has this name); on a Cluster one per hash slot
 * (`slot`), with a hash tag of that slot, so that it sits beside the keys of every batch and
 * block of that slot.
 */
export function blockedMarker(namespace: string, slot: number | undefined): string {
  const marker = `${namespace}blocked`
  return slot === undefined ? marker : `${marker}{${slotTag(slot)}}`
}
