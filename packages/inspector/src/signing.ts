// What the page signs (CSRF tokens, notices) and how it compares what comes back.
import { createHmac, timingSafeEqual } from 'node:crypto'

/** HMAC-SHA-256 of `text` under `key`, for `purpose` only (base64url). */
export function signature(key: string, purpose: string, text: string): string {
  return createHmac('sha256', key)
    .update(`limiter-inspector-${purpose}:${text}`)
    .digest('base64url')
}

/** Whether `a` and `b` are the same text, in time that does not depend on where they differ. */
export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}
