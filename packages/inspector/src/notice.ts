// The notice the page shows after a form's action (a 303 back to the page): the redirect carries
// the text and its HMAC, and the page shows a text only if it signed it (or a process sharing its
// `secret` did), so a link cannot make the page say what someone else wrote.
import { sameText, signature } from './signing.js'

const mac = (key: string, text: string): string => signature(key, 'notice', text)

/** The query string that shows `text` on the page. */
export function noticeQuery(key: string, text: string): string {
  return `?message=${encodeURIComponent(text)}&sig=${mac(key, text)}`
}

/** The notice in `url`, if signed with `key`; any other text is not shown. */
export function noticeOf(key: string, url: URL): string | undefined {
  const text = url.searchParams.get('message')
  const sig = url.searchParams.get('sig')
  if (text === null || sig === null) return undefined
  return sameText(mac(key, text), sig) ? text : undefined
}
