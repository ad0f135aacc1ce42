// Key helpers without Node's HTTP: client IP (IPv6 grouped by prefix), user id plus URL, and route.
// Pure JavaScript, so the root entry and the Fetch kit load nothing of Node's HTTP.
import { LimiterError, LimiterRangeError, LimiterTypeError } from '../common/errors.js'

// node:net's isIPv4 / isIPv6, as the regular expressions Node itself uses (lib/internal/net.js).
const V4_SEG = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])'
const V4_STR = `(?:${V4_SEG}\\.){3}${V4_SEG}`
const IPV4 = new RegExp(`^${V4_STR}$`)
const V6_SEG = '(?:[0-9a-fA-F]{1,4})'
const IPV6 = new RegExp(
  '^(?:' +
    `(?:${V6_SEG}:){7}(?:${V6_SEG}|:)|` +
    `(?:${V6_SEG}:){6}(?:${V4_STR}|:${V6_SEG}|:)|` +
    `(?:${V6_SEG}:){5}(?::${V4_STR}|(?::${V6_SEG}){1,2}|:)|` +
    `(?:${V6_SEG}:){4}(?:(?::${V6_SEG}){0,1}:${V4_STR}|(?::${V6_SEG}){1,3}|:)|` +
    `(?:${V6_SEG}:){3}(?:(?::${V6_SEG}){0,2}:${V4_STR}|(?::${V6_SEG}){1,4}|:)|` +
    `(?:${V6_SEG}:){2}(?:(?::${V6_SEG}){0,3}:${V4_STR}|(?::${V6_SEG}){1,5}|:)|` +
    `(?:${V6_SEG}:){1}(?:(?::${V6_SEG}){0,4}:${V4_STR}|(?::${V6_SEG}){1,6}|:)|` +
    `(?::(?:(?::${V6_SEG}){0,5}:${V4_STR}|(?::${V6_SEG}){1,7}|:))` +
    ')(?:%[0-9a-zA-Z-.:]{1,})?$',
)

/** Whether `text` is an IPv4 address in dotted-decimal form (what `node:net`'s `isIPv4` says). */
export const isIPv4 = (text: string): boolean => IPV4.test(text)

/** Whether `text` is an IPv6 address, zone id allowed (what `node:net`'s `isIPv6` says). */
export const isIPv6 = (text: string): boolean => IPV6.test(text)

/** Options for {@link ipKey}. */
export interface IpKeyOptions {
  /**
   * IPv6 addresses sharing this many leading bits share one key (default 56: one key per /56,
   * the block many ISPs delegate to one subscriber, as express-rate-limit v8 groups them). An
   * integer from 1 to 128.
   */
  readonly ipv6Subnet?: number | undefined
}

/** Validates an IPv6 prefix length: an integer from 1 to 128. */
export function checkIpv6Subnet(value: unknown): number {
  if (typeof value !== 'number')
    throw new LimiterTypeError('ipv6Subnet', value, 'an integer from 1 to 128')
  if (!Number.isInteger(value) || value < 1 || value > 128) {
    throw new LimiterRangeError('ipv6Subnet', value, 'must be an integer from 1 to 128')
  }
  return value
}

// `[v6]`, `[v6]:port` and `v4:port` (what proxies such as Azure Application Gateway append to
// X-Forwarded-For): the address inside, or `undefined` for anything else. A bare IPv6 address
// keeps its last group, which a port cannot be told apart from.
const WITH_PORT = /^(?:\[([^\]]+)\]|([0-9.]+))(?::([0-9]{1,5}))?$/

function withoutPort(text: string): string | undefined {
  const match = WITH_PORT.exec(text)
  if (match === null) return undefined
  const [, v6, v4, port] = match
  if (port !== undefined && Number(port) > 65535) return undefined
  if (v6 !== undefined) return isIPv6(v6) ? v6 : undefined
  return port !== undefined && v4 !== undefined && isIPv4(v4) ? v4 : undefined
}

/** The eight 16-bit groups of a valid IPv6 address (zone id dropped). */
function ipv6Groups(ip: string): number[] {
  let text = ip
  const zone = text.indexOf('%')
  if (zone >= 0) text = text.slice(0, zone)
  const lastColon = text.lastIndexOf(':')
  const tail = text.slice(lastColon + 1)
  if (tail.includes('.')) {
    // An embedded IPv4 (::ffff:1.2.3.4) becomes the last two groups.
    const [a = 0, b = 0, c = 0, d = 0] = tail.split('.').map(Number)
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head = '', rest] = text.split('::')
  const left = head === '' ? [] : head.split(':')
  const right = rest === undefined || rest === '' ? [] : rest.split(':')
  const zeros =
    rest === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0')
  return [...left, ...zeros, ...right].map((g) => Number.parseInt(g, 16))
}

/** RFC 5952 text: lowercase hex, no leading zeros, the longest run of 2+ zero groups as `::`. */
function formatIpv6(groups: readonly number[]): string {
  let bestStart = -1
  let bestLength = 1
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++
      continue
    }
    let j = i
    while (j < 8 && groups[j] === 0) j++
    if (j - i > bestLength) {
      bestStart = i
      bestLength = j - i
    }
    i = j
  }
  const hex = groups.map((g) => g.toString(16))
  if (bestStart < 0) return hex.join(':')
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`
}

/**
 * A rate-limit key for a client IP, as the framework resolved it (Express `req.ip`, Koa `ctx.ip`,
 * Fastify `request.ip`, which apply the app's trust-proxy setting; this never reads
 * `X-Forwarded-For` itself). IPv4 addresses are returned as they are; IPv4-mapped IPv6
 * (`::ffff:1.2.3.4`) is folded to IPv4; other IPv6 addresses are masked to their `/ipv6Subnet`
 * prefix (default /56) and written in RFC 5952 form, so every spelling of one network groups
 * alike. A port and brackets around an address are dropped (`203.0.113.7:50000`,
 * `[2001:db8::1]:443`, as some proxies write X-Forwarded-For), so each connection of one client
 * does not get a budget of its own. Anything else is returned unchanged. Throws when `ip` is
 * missing or empty.
 *
 * @example
 * ipKey('2001:db8:0:0:1::7') // '2001:db8::/56'
 * ipKey('203.0.113.7:50000') // '203.0.113.7'
 * ipKey('::ffff:203.0.113.9') // '203.0.113.9'
 * ipKey('2001:db8::1', { ipv6Subnet: 48 }) // '2001:db8::/48'
 */
export function ipKey(ip: string | undefined | null, options?: IpKeyOptions): string {
  const subnet = options?.ipv6Subnet === undefined ? 56 : checkIpv6Subnet(options.ipv6Subnet)
  if (typeof ip !== 'string' || ip === '') {
    throw new LimiterError(
      'ERR_LIMITER_KEY',
      `No client IP for this request (got ${ip === '' ? 'an empty string' : String(ip)}): the connection may have closed, or the server listens on a Unix socket. Pass a \`key\` option to key requests another way.`,
    )
  }
  if (isIPv4(ip)) return ip
  if (isIPv6(ip)) return ipv6Key(ip, subnet)
  const bare = withoutPort(ip)
  if (bare === undefined) return ip
  return isIPv4(bare) ? bare : ipv6Key(bare, subnet)
}

// A valid IPv6 address as its key: IPv4-mapped folded to IPv4, others masked to `/subnet`.
function ipv6Key(ip: string, subnet: number): string {
  const groups = ipv6Groups(ip)
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const hi = groups[6] ?? 0
    const lo = groups[7] ?? 0
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
  }
  const masked = groups.map((g, i) => {
    const bits = Math.min(16, Math.max(0, subnet - 16 * i))
    return bits === 0 ? 0 : g & ((0xffff << (16 - bits)) & 0xffff)
  })
  return `${formatIpv6(masked)}/${subnet}`
}

export function nonEmpty(option: string, value: unknown): string {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  if (typeof value !== 'string' || value === '')
    throw new LimiterTypeError(option, value, 'a non-empty string', 'ERR_LIMITER_KEY')
  return value
}

/**
 * A key for one user, optionally on one URL path (the query string is dropped, so
 * `?page=2` does not make a new bucket).
 *
 * @example
 * userKey(req.user.id) // 'user:42'
 * userKey(req.user.id, req.originalUrl) // 'user:42 /reports/7'
 */
export function userKey(userId: string | number, url?: string): string {
  // `%` and space are escaped in the id so the space before the path is unambiguous.
  const id = nonEmpty('userId', userId).replace(/[% ]/g, (c) => (c === '%' ? '%25' : '%20'))
  if (url === undefined) return `user:${id}`
  const path = nonEmpty('url', url).split(/[?#]/, 1)[0]
  return `user:${id} ${path}`
}

/**
 * A key for a route: method and route pattern (never the raw URL, whose ids would make one
 * bucket per resource). `HEAD` counts as `GET`, since frameworks serve it with the GET handler.
 *
 * @example
 * routeKey('get', '/users/:id') // 'GET /users/:id'
 */
export function routeKey(method: string, pattern: string): string {
  const m = nonEmpty('method', method).toUpperCase()
  return `${m === 'HEAD' ? 'GET' : m} ${nonEmpty('pattern', pattern)}`
}
