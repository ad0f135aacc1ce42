// Warnings a limiter gives once, on the first request that shows a likely mistake: a key built
// from a missing value, a forwarded client address the framework ignores, and a trust-proxy
// setting under which a client picks its own key.
import { type ProxyTrust, trustFinding } from './proxy-trust.js'

/** What the watch reads of a request, in the adapter's vocabulary (see `AdapterSpec`). */
export interface RequestAddresses<Req> {
  /** The framework's client IP (after its own trust-proxy logic), for the default key. */
  readonly ip: (req: Req) => string | undefined
  /** The connection's own peer address; with `headers`, spots an ignored forwarding header. */
  readonly peer?: ((req: Req) => string | undefined) | undefined
  /** The request's header fields, as Node gives them (lower-case names). */
  readonly headers?: ((req: Req) => Readonly<Record<string, unknown>>) | undefined
  /** Where the host's trust-proxy setting is; read once, for a limiter on the default key. */
  readonly trust?: ((req: Req) => ProxyTrust | undefined) | undefined
}

/** Node's way to silence one: `--disable-warning=<code>`; or the `warnings: false` option. */
export type LimiterWarningCode =
  | 'LIMITER_SUSPICIOUS_KEY'
  | 'LIMITER_FORWARDED_IGNORED'
  | 'LIMITER_PERMISSIVE_TRUST_PROXY'
  | 'LIMITER_TRUST_PROXY_DEFAULT'
  | 'LIMITER_PER_ROUTE'

interface WarningProcess {
  readonly emitWarning?: (message: string, options: { type: string; code: string }) => void
}

function emit(code: LimiterWarningCode, message: string): void {
  const text = `${message} Silence it with --disable-warning=${code}, or the limiter's \`warnings: false\`.`
  // Edge runtimes (a Next.js route on `runtime = 'edge'`) have a `process` without it
  const proc = (globalThis as { process?: WarningProcess }).process
  if (typeof proc?.emitWarning === 'function')
    proc.emitWarning(text, { type: 'LimiterWarning', code })
  else console.warn(`(LimiterWarning) [${code}] ${text}`)
}

const quoted = (name: string): string => `Rate limiter ${JSON.stringify(name)}:`

// What a template literal makes of a missing or unserializable value.
const MISSING = ['undefined', 'null', 'NaN', '[object Object]'] as const
const SEPARATORS = ':/|='

/** The segment of `key` that looks like a missing value (`login:undefined`), if any. */
export function suspiciousSegment(key: string): string | undefined {
  for (const word of MISSING) {
    let at = key.indexOf(word)
    while (at >= 0) {
      const end = at + word.length
      const before = at === 0 || SEPARATORS.includes(key.charAt(at - 1))
      const after = end === key.length || SEPARATORS.includes(key.charAt(end))
      if (before && after) return word
      at = key.indexOf(word, at + 1)
    }
  }
  return undefined
}

// Whether `key` (from a `key` callback) looks built from a missing value; warns if so.
function keyWarned(name: string, key: string): boolean {
  const word = suspiciousSegment(key)
  if (word === undefined) return false
  emit(
    'LIMITER_SUSPICIOUS_KEY',
    `${quoted(name)} the key ${JSON.stringify(key.length > 100 ? `${key.slice(0, 97)}...` : key)} has a segment "${word}", so every request like this one shares one counter. The \`key\` callback probably read a missing value: a field this request lacks, or a body not parsed yet (put the body parser before the limiter; on Fastify use \`hook: 'preHandler'\`).`,
  )
  return true
}

// Whether `req` carries a forwarding header the framework ignored (its address is the
// connection's own); warns if so.
function forwardedWarned<Req>(adapter: RequestAddresses<Req>, name: string, req: Req): boolean {
  const { headers, peer } = adapter
  if (headers === undefined || peer === undefined) return false
  const h = headers(req)
  if (h['x-forwarded-for'] === undefined && h.forwarded === undefined) return false
  const ip = adapter.ip(req)
  if (ip === undefined || ip !== peer(req)) return false
  emit(
    'LIMITER_FORWARDED_IGNORED',
    `${quoted(name)} a request carries ${h['x-forwarded-for'] === undefined ? 'Forwarded' : 'X-Forwarded-For'}, but the client address the framework gives (${ip}) is the connection's own. Behind a proxy, every client then shares the proxy's address and one counter: tell the framework to trust the number of proxies in front (1 in these examples) or their addresses, never \`true\`, under which a client picks its own address: Express \`app.set('trust proxy', 1)\`; Koa \`app.proxy = true\` with \`app.maxIpsCount = 1\`; Fastify \`trustProxy\` set to the proxies' addresses (Fastify 5 trusts no proxy for a number); Hono and other Fetch-API hosts, the limiter's own \`trustProxy\` option (\`trustProxy: 1\`). If no proxy stands in front of this app, a client sent the header and ignoring it is right.`,
  )
  return true
}

// Warns when the host's trust-proxy setting lets a client pick its own address.
function trustWarn<Req>(trust: (req: Req) => ProxyTrust | undefined, name: string, req: Req): void {
  const found = trustFinding(trust(req))
  if (found !== undefined) emit(found.code, `${quoted(name)} ${found.message}`)
}

/**
 * The per-request watch of one limiter: `(req, key)` checks the key (when it came from a `key`
 * callback), the request's forwarding headers, and (on the first request, for the default key)
 * the host's trust-proxy setting, and warns at most once for each. `undefined` when there is
 * nothing to watch.
 */
export function requestWatch<Req>(
  adapter: RequestAddresses<Req>,
  limiterName: string,
  customKey: boolean,
): ((req: Req, key: string) => void) | undefined {
  let keys = customKey
  let forwarded = adapter.headers !== undefined && adapter.peer !== undefined
  const { trust } = adapter
  let trusted = !customKey && trust !== undefined
  if (!keys && !forwarded && !trusted) return undefined
  return (req, key) => {
    if (keys && keyWarned(limiterName, key)) keys = false
    if (trusted && trust !== undefined) {
      trusted = false
      trustWarn(trust, limiterName, req)
    }
    if (forwarded && forwardedWarned(adapter, limiterName, req)) forwarded = false
  }
}

/**
 * The route-scope watch of one limiter without a `name`: told each request's route scope, it
 * warns once when a second scope shows up. Each scope counts on its own, so one limiter on
 * several routes (or under a mount path with parameters, which Express fills with each value)
 * gives a client one budget per route, where one express-rate-limit instance is one budget.
 */
export function scopeWatch(limiterName: string): (scope: string) => void {
  let first: string | undefined
  let warned = false
  return (scope) => {
    if (warned || scope === first) return
    if (first === undefined) {
      first = scope
      return
    }
    warned = true
    const shown = (s: string) => (s === '' ? 'the app (no route)' : JSON.stringify(s))
    emit(
      'LIMITER_PER_ROUTE',
      `${quoted(limiterName)} counts on ${shown(first)} and on ${shown(scope)}: each route has a budget of its own, so a client gets one per route (one express-rate-limit instance is one budget wherever it is used; a mount path with parameters gives each value its own). To share one budget, give the limiter a \`name\`; to mean one per route, make a limiter per route.`,
    )
  }
}
