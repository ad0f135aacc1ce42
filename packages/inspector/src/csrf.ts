// CSRF by double submit: the page sets a random token in an HttpOnly, SameSite=Strict cookie
// scoped to the mount path and embeds the same token in its forms; a POST must carry it in the
// `csrf` field or the `x-csrf-token` header, equal to the cookie. With the `secret` option the
// token is signed (`random.HMAC(secret, random)`): a cookie and form planted together (from a
// sibling subdomain, or over plain HTTP) are refused, and every process sharing the secret can
// check it. Without it any process can check the token (no shared secret), and a cross-site form
// can neither read the token nor set the cookie.
import { randomBytes } from 'node:crypto'
import { sameText as same, signature } from './signing.js'

export const CSRF_COOKIE = 'limiter_inspector_csrf'
const TOKEN = /^[A-Za-z0-9_-]{32,64}$/
const SIGNED = /^([A-Za-z0-9_-]{32})\.([A-Za-z0-9_-]{43})$/

const sign = (secret: string, text: string): string => signature(secret, 'csrf', text)

/** Whether `token` has a token's shape and, with `secret`, its signature. */
function wellFormed(token: string, secret: string | undefined): boolean {
  if (secret === undefined) return TOKEN.test(token)
  const match = SIGNED.exec(token)
  return match !== null && same(sign(secret, match[1] as string), match[2] as string)
}

/** The request's CSRF cookie, if one is well formed (and, with `secret`, signed by it). */
export function cookieToken(request: Request, secret: string | undefined): string | undefined {
  const header = request.headers.get('cookie') ?? ''
  for (const part of header.split(';')) {
    const [name, ...rest] = part.trim().split('=')
    if (name !== CSRF_COOKIE) continue
    const value = rest.join('=')
    if (wellFormed(value, secret)) return value
  }
  return undefined
}

export function newToken(secret: string | undefined): string {
  const random = randomBytes(24).toString('base64url')
  return secret === undefined ? random : `${random}.${sign(secret, random)}`
}

export function tokenCookie(token: string, mountPath: string, secure: boolean): string {
  const path = mountPath === '' ? '/' : mountPath
  return `${CSRF_COOKIE}=${token}; Path=${path}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`
}

/** Whether `submitted` (the form field or header) matches the cookie. */
export function csrfValid(
  request: Request,
  submitted: string | undefined,
  secret: string | undefined,
): boolean {
  const cookie = cookieToken(request, secret)
  if (cookie === undefined || submitted === undefined) return false
  return same(cookie, submitted)
}
