// The notice the page shows after a form's action (a 303 back to the page): the redirect carries
// the text and its HMAC, and the page shows a text only if it signed it (or a process sharing its
// `secret` did), so a link cannot make the page say what someone else wrote.
import { createHmac, timingSafeEqual } from 'node:crypto'

function mac(key: string, text: string): string {
  return createHmac('sha256', key).update(`limiter-inspector-notice:${text}`).digest('base64url')
}

/** The query string that shows `text` on the page. */
export function noticeQuery(key: string, text: string): string {
  return `?message=${encodeURIComponent(text)}&sig=${mac(key, text)}`
}

/** The notice in `url`, if signed with `key`; any other text is not shown. */
export function noticeOf(key: string, url: URL): string | undefined {
  const text = url.searchParams.get('message')
  const sig = url.searchParams.get('sig')
  if (text === null || sig === null) return undefined
  const expected = Buffer.from(mac(key, text))
  const given = Buffer.from(sig)
  return expected.length === given.length && timingSafeEqual(expected, given) ? text : undefined
}
