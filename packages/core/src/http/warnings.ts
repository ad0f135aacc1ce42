// Warnings a limiter gives once, on the first request that shows a likely mistake: a key built
// from a missing value, and a forwarded client address the framework ignores.

/** What the watch reads of a request, in the adapter's vocabulary (see `AdapterSpec`). */
export interface RequestAddresses<Req> {
  /** The framework's client IP (after its own trust-proxy logic), for the default key. */
  readonly ip: (req: Req) => string | undefined
  /** The connection's own peer address; with `headers`, spots an ignored forwarding header. */
  readonly peer?: ((req: Req) => string | undefined) | undefined
  /** The request's header fields, as Node gives them (lower-case names). */
  readonly headers?: ((req: Req) => Readonly<Record<string, unknown>>) | undefined
}

/** Node's way to silence one: `--disable-warning=<code>`; or the `warnings: false` option. */
export type LimiterWarningCode = 'LIMITER_SUSPICIOUS_KEY' | 'LIMITER_FORWARDED_IGNORED'

function emit(code: LimiterWarningCode, message: string): void {
  process.emitWarning(
    `${message} Silence it with --disable-warning=${code}, or the limiter's \`warnings: false\`.`,
    { type: 'LimiterWarning', code },
  )
}

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

/**
 * The per-request watch of one limiter: `(req, key)` checks the key (when it came from a `key`
 * callback) and the request's forwarding headers, and warns at most once for each. `undefined`
 * when there is nothing to watch.
 */
export function requestWatch<Req>(
  adapter: RequestAddresses<Req>,
  limiterName: string,
  customKey: boolean,
): ((req: Req, key: string) => void) | undefined {
  let keys = customKey
  const { headers, peer } = adapter
  let forwarded = headers !== undefined && peer !== undefined
  if (!keys && !forwarded) return undefined
  return (req, key) => {
    if (keys) {
      const word = suspiciousSegment(key)
      if (word !== undefined) {
        keys = false
        emit(
          'LIMITER_SUSPICIOUS_KEY',
          `Rate limiter ${JSON.stringify(limiterName)}: the key ${JSON.stringify(key.length > 100 ? `${key.slice(0, 97)}...` : key)} has a segment "${word}", so every request like this one shares one counter. The \`key\` callback probably read a missing value: a field this request lacks, or a body not parsed yet (put the body parser before the limiter; on Fastify use \`hook: 'preHandler'\`).`,
        )
      }
    }
    if (forwarded && headers !== undefined && peer !== undefined) {
      const h = headers(req)
      if (h['x-forwarded-for'] === undefined && h.forwarded === undefined) return
      const ip = adapter.ip(req)
      if (ip === undefined || ip !== peer(req)) return
      forwarded = false
      emit(
        'LIMITER_FORWARDED_IGNORED',
        `Rate limiter ${JSON.stringify(limiterName)}: a request carries ${h['x-forwarded-for'] === undefined ? 'Forwarded' : 'X-Forwarded-For'}, but the client address the framework gives (${ip}) is the connection's own. Behind a proxy, every client then shares the proxy's address and one counter: tell the framework to trust your proxy (Express \`app.set('trust proxy', ...)\`, Koa \`app.proxy = true\`, Fastify \`trustProxy\`; Hono and other Fetch-API hosts: the limiter's own \`trustProxy\` option). If no proxy stands in front of this app, a client sent the header and ignoring it is right.`,
      )
    }
  }
}
