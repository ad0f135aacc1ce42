// The client address on a Fetch host: no socket, so a resolver gives it; forwarded headers count
// only behind an explicit `trustProxy`.
import { LimiterError, LimiterRangeError, LimiterTypeError } from '../common/errors.js'

/**
 * Which forwarded addresses to believe: `false` (default) none; `true` the left-most
 * `X-Forwarded-For` entry (every hop is a proxy of yours); a number `n` the entry `n` hops from
 * the connection (one proxy in front: `1`, the right-most entry).
 */
export type TrustProxy = boolean | number

/**
 * Set (to `true`) on options whose `trustProxy` withRateLimit chose because none was given, so
 * the limiter can warn where that default is unsafe (see `trustFinding`).
 */
export const TRUST_DEFAULTED: unique symbol = Symbol('limiter.trustProxyDefaulted')

/** Validates `trustProxy`: a boolean or a non-negative integer. */
export function checkTrustProxy(value: unknown): TrustProxy {
  if (value === undefined) return false
  if (typeof value === 'boolean') return value
  if (typeof value !== 'number')
    throw new LimiterTypeError('trustProxy', value, 'a boolean or a number of proxy hops')
  if (!Number.isInteger(value) || value < 0)
    throw new LimiterRangeError('trustProxy', value, 'must be a non-negative integer (proxy hops)')
  return value
}

// The comma-separated entries of X-Forwarded-For, trimmed, empty ones dropped.
function forwardedFor(headers: Headers): string[] {
  const field = headers.get('x-forwarded-for')
  if (field === null) return []
  return field
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
}

/**
 * The client address under `trust`: the connection's own (`peer`), or an `X-Forwarded-For`
 * entry as Express's `trust proxy` picks it with `true` or a hop count. An entry is returned as
 * written: the default key (`ipKey`) drops a port or brackets (`203.0.113.7:50000`, from Azure
 * Application Gateway), as on the Node adapters. When the chain is shorter than `trust` says (a
 * client reaching the app past the proxies, or fewer of them), the farthest entry is taken, which
 * that client wrote: as Express does, so `trust` must not count more proxies than there are.
 * `undefined` only when there is no entry and no peer.
 */
export function clientAddress(
  peer: string | undefined,
  headers: Headers,
  trust: TrustProxy,
): string | undefined {
  if (trust === false || trust === 0) return peer
  const hops = forwardedFor(headers)
  if (hops.length === 0) return peer
  // addresses from the nearest to the farthest: the connection, then the entries right to left
  if (trust === true) return hops[0]
  const chain = [peer, ...hops.reverse()]
  return chain[Math.min(trust, chain.length - 1)]
}

/**
 * The error of a request whose client address no resolver could give (and no `key` option keys
 * requests another way): never a shared `''` counter for every such request.
 */
export function noAddress(hint: string): LimiterError {
  return new LimiterError(
    'ERR_LIMITER_KEY',
    `No client address for this request: a Fetch-API host has no socket to read it from. ${hint} Or pass a \`key\` option to key requests another way (an API key, a user id).`,
  )
}
