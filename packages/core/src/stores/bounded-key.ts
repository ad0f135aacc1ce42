// The one bound on the bytes of a user key, for everything kept in process per key.
import { encodeTag, MAX_TAG_BYTES } from './redis-keys.js'

// Marks a digest (and escapes a short key that happens to start with it), so the map is one-to-one.
const MARK = '\u0000'

/**
 * A user key as an in-process store or cache holds it: the key itself while it is at most
 * {@link MAX_TAG_BYTES} (200) UTF-8 bytes; a longer key becomes its SHA-256 digest, exactly as
 * RedisStore names it in Redis (see `encodeTag`). Two keys that differ anywhere stay distinct;
 * the same long key always gives the same digest. So a client who controls a key can make it
 * long, but never make the process hold more than ~200 bytes for it.
 */
export function boundedKey(key: string): string {
  // Most keys: short, and not starting with the mark. Two comparisons, no scan, and small
  // enough for the optimizing compiler to inline into every caller.
  return key.length * 3 <= MAX_TAG_BYTES && key.charCodeAt(0) !== 0 ? key : rareKey(key)
}

// A key that may be long, or starts with the mark.
function rareKey(key: string): string {
  if (key.length <= MAX_TAG_BYTES && Buffer.byteLength(key) <= MAX_TAG_BYTES)
    return key.charCodeAt(0) === 0 ? MARK + key : key
  // encodeTag hashes every key over the bound (escaping only makes a key longer): `%H...`.
  return MARK + encodeTag(key)
}

/**
 * Whether `held`, a key as {@link boundedKey} holds it, is a long key's digest rather than the
 * key itself (a key kept whole, or escaped, is not).
 */
export function isKeyDigest(held: string): boolean {
  return held.length === 46 && held.charCodeAt(0) === 0 && /^%[Hh][\w-]{43}$/.test(held.slice(1))
}
