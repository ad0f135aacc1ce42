// The client address of a Hono request, from the server binding Hono hands over as `c.env`:
// what `@hono/node-server/conninfo`, `hono/bun` and `hono/deno` read, without importing them.
import type { Context } from 'hono'

interface NodeBindings {
  readonly incoming?: {
    readonly socket?: { readonly remoteAddress?: unknown }
    readonly headers?: Readonly<Record<string, unknown>>
  }
}
interface BunServer {
  readonly requestIP?: (request: Request) => { readonly address?: unknown } | null
}
interface DenoInfo {
  readonly remoteAddr?: { readonly hostname?: unknown }
}
type Binding = NodeBindings & BunServer & DenoInfo & { readonly server?: NodeBindings }

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined

/**
 * The address the runtime gives for `c`: `@hono/node-server` (`c.env.incoming.socket`, or under
 * `c.env.server`), Bun (`c.env.requestIP(c.req.raw)`), Deno (`c.env.remoteAddr.hostname`).
 * `undefined` elsewhere (Workers, Vercel, `app.request()` in tests): pass `getConnInfo` or `ip`.
 */
export function bindingAddress(c: Context): string | undefined {
  const env = c.env as Binding | undefined
  if (env === undefined || env === null || typeof env !== 'object') return undefined
  const node = (env.server ?? env).incoming?.socket?.remoteAddress
  if (node !== undefined) return text(node)
  if (typeof env.requestIP === 'function') return text(env.requestIP(c.req.raw)?.address)
  return text(env.remoteAddr?.hostname)
}

/**
 * A request header field: from Node's own request on @hono/node-server (a property read, where
 * the Fetch `Headers` validates the name on every call), else from `c.req.raw.headers`.
 */
export function bindingHeader(c: Context, name: string): string | undefined {
  const env = c.env as Binding | undefined
  const fields = (env?.server ?? env)?.incoming?.headers
  if (fields === undefined || fields === null || typeof fields !== 'object')
    return c.req.raw.headers.get(name) ?? undefined
  // Node joins repeated fields with ', ' (`set-cookie` aside, which is never asked for here)
  const value = fields[name]
  return typeof value === 'string' ? value : undefined
}

/** What to pass when no address was found: the error's advice. */
export const IP_HINT =
  "On @hono/node-server, Bun and Deno it comes from the server binding (`c.env`); elsewhere pass your runtime's Hono helper, `rateLimit({ getConnInfo })` (from 'hono/cloudflare-workers', 'hono/vercel', 'hono/aws-lambda', ...), or `ip: (c) => ...`."
