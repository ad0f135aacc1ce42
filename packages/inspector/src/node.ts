// Node's request and response to Fetch's and back, for the Node frameworks' mounts.
import type { IncomingMessage, ServerResponse } from 'node:http'

/** A body a framework may have parsed already (Express's body parsers, Koa's, Fastify's). */
export type ParsedBody = unknown

function origin(req: IncomingMessage): string {
  const secure = (req.socket as { encrypted?: boolean } | undefined)?.encrypted === true
  const host = req.headers.host ?? 'localhost'
  return `${secure ? 'https' : 'http'}://${host}`
}

function encode(body: ParsedBody, type: string): string | undefined {
  if (body === undefined || body === null) return undefined
  if (typeof body === 'string') return body
  if (Buffer.isBuffer(body)) return body.toString('utf8')
  if (typeof body !== 'object') return String(body)
  if (type.includes('application/json')) return JSON.stringify(body)
  const entries = Object.entries(body as Record<string, unknown>).map(
    ([k, v]): [string, string] => [k, String(v)],
  )
  return new URLSearchParams(entries).toString()
}

/** The largest body a POST may have (the actions' fields are a few short strings). */
export const MAX_BODY_BYTES = 64 * 1024

/** A body over `MAX_BODY_BYTES`: the frameworks answer 413 from its `status`. */
class BodyTooLargeError extends RangeError {
  readonly status = 413
  readonly statusCode = 413
  readonly expose = true
  constructor() {
    super(`request body over ${MAX_BODY_BYTES / 1024} kB`)
    this.name = 'BodyTooLargeError'
  }
}

async function readStream(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk))
    size += buffer.length
    if (size > MAX_BODY_BYTES) throw new BodyTooLargeError()
    chunks.push(buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/**
 * A Fetch Request for `req`: `path` is the URL as the client asked it (Express's `originalUrl`);
 * `parsed`, a body a framework already read (used when the stream is consumed).
 */
export async function toRequest(
  req: IncomingMessage,
  path: string,
  parsed?: { readonly body: ParsedBody } | undefined,
): Promise<Request> {
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v)
  }
  const method = req.method ?? 'GET'
  let body: string | undefined
  if (method !== 'GET' && method !== 'HEAD') {
    // Express's body parsers mark a stream they read with `_body`; the others read it to its end.
    const consumed = req.readableEnded || (req as { _body?: unknown })._body === true
    body = consumed
      ? encode(parsed?.body, headers.get('content-type') ?? '')
      : await readStream(req)
  }
  return new Request(
    `${origin(req)}${path}`,
    body === undefined ? { method, headers } : { method, headers, body },
  )
}

/** Writes `response` to `res`. */
export async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  const cookies = response.headers.getSetCookie()
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') res.setHeader(name, value)
  })
  if (cookies.length > 0) res.setHeader('set-cookie', cookies)
  res.statusCode = response.status
  res.end(Buffer.from(await response.arrayBuffer()))
}
