// CSRF by double submit: the page sets a random token in an HttpOnly, SameSite=Strict cookie
// scoped to the mount path and embeds the same token in its forms; a POST must carry it in the
// `csrf` field or the `x-csrf-token` header, equal to the cookie. Any process can check it (no
// shared secret), and a cross-site form can neither read the token nor set the cookie.
import { randomBytes, timingSafeEqual } from 'node:crypto'

export const CSRF_COOKIE = 'limiter_inspector_csrf'
const TOKEN = /^[A-Za-z0-9_-]{32,64}$/

export function cookieToken(request: Request): string | undefined {
  const header = request.headers.get('cookie') ?? ''
  for (const part of header.split(';')) {
    const [name, ...rest] = part.trim().split('=')
    if (name !== CSRF_COOKIE) continue
    const value = rest.join('=')
    return TOKEN.test(value) ? value : undefined
  }
  return undefined
}

export function newToken(): string {
  return randomBytes(24).toString('base64url')
}

export function tokenCookie(token: string, mountPath: string, secure: boolean): string {
  const path = mountPath === '' ? '/' : mountPath
  return `${CSRF_COOKIE}=${token}; Path=${path}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`
}

/** Whether `submitted` (the form field or header) matches the cookie. */
export function csrfValid(request: Request, submitted: string | undefined): boolean {
  const cookie = cookieToken(request)
  if (cookie === undefined || submitted === undefined) return false
  const a = Buffer.from(cookie)
  const b = Buffer.from(submitted)
  return a.length === b.length && timingSafeEqual(a, b)
}
