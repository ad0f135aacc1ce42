// Headers onto a Fetch `Response`, whose headers may be immutable (from `fetch()`, or
// `Response.redirect()`): a copy is made then, never an error.
import { nowMs } from '../common/clock.js'
import { formatHeaders, type HeaderPair } from '../http/headers.js'
import { mergeHeaders } from '../http/merge-headers.js'
import type { LimitedResponse, RateLimitCheck } from '../http/types.js'

// The pairs to set: the check's own, merged with what the response holds (several limiters
// append list members; single values keep the strictest). What is there came from inside this
// limiter (inner limiters, the handler, an upstream), so this limiter's list members go first,
// the order Node's adapters give.
function pairsFor(headers: Headers, pairs: readonly HeaderPair[], check: RateLimitCheck) {
  let fresh = true
  for (const pair of pairs) {
    if (headers.has(pair[0])) {
      fresh = false
      break
    }
  }
  if (fresh) return pairs
  return mergeHeaders(
    pairs,
    (name) => headers.get(name) ?? undefined,
    (standard) => formatHeaders([standard], check.policy, check.decision, nowMs),
    'before',
  )
}

// Sets every pair (each `set` replaces, so setting them again on a copy is harmless).
function setAll(headers: Headers, pairs: readonly HeaderPair[]): void {
  for (const [name, value] of pairs) headers.set(name, value)
}

/**
 * Whether `value` is a Fetch `Response`: this realm's, or a host's own class that stands in for it
 * (@hono/node-server's lightweight responses), read by its shape.
 */
export function isResponse(value: unknown): value is Response {
  if (value instanceof Response) return true
  if (value === null || typeof value !== 'object') return false
  const { status, headers } = value as { status?: unknown; headers?: unknown }
  return typeof status === 'number' && headers instanceof Headers && 'body' in value
}

/**
 * A copy of `res` that can be changed: same status, status text, headers and body (the body is
 * handed over, not read). `undefined` when no copy can be made (a status outside 200 to 599,
 * such as 101 for a WebSocket upgrade, or a body already read).
 */
export function mutableCopy(res: Response): Response | undefined {
  try {
    return new Response(res.body, res)
  } catch {
    return undefined
  }
}

/**
 * `res` with the check's headers merged in: the same response when its headers can be changed,
 * else a copy. A response that cannot be copied goes out as it is, without them. With `merge`
 * false (the kit's own call, when no other limiter of ours decorated this request's response),
 * mutable headers are set without reading them first; immutable ones (an upstream's response
 * from `fetch()`) are merged all the same.
 */
export function withHeaders(
  res: Response,
  pairs: readonly HeaderPair[],
  check: RateLimitCheck,
  merge = true,
): Response {
  if (pairs.length === 0) return res
  const { headers } = res
  if (!merge) {
    try {
      setAll(headers, pairs)
      return res
    } catch {
      // immutable headers: merged into a copy below
    }
  }
  const merged = pairsFor(headers, pairs, check)
  try {
    setAll(headers, merged)
    return res
  } catch {
    // immutable headers (a TypeError): the merge was computed from the original, so it holds
    const copy = mutableCopy(res)
    if (copy === undefined) return res
    try {
      setAll(copy.headers, merged)
    } catch {
      return res
    }
    return copy
  }
}

// Marks a request whose response a limiter of ours has decorated, under a symbol every copy of
// this package shares: an outer limiter merges with what the inner ones wrote, one alone sets its
// headers without reading the response's first (each read of a Fetch `Headers` costs about a
// set). A property, not a WeakSet: adding to a WeakSet per request costs more than the reads.
const DECORATED = Symbol.for('@limiter/core/fetch:decorated')
type Marked = { [DECORATED]?: true }

function mark(request: object): void {
  try {
    ;(request as Marked)[DECORATED] = true
  } catch {
    // a frozen request: an outer limiter then sets its fields over the inner ones'
  }
}

// Marks a request whose first limiter of ours set its fields before the handler ran (see
// `prepareHeaders`): the limiters nested in it do not.
const PREPARED = Symbol.for('@limiter/core/fetch:prepared')
type Prepared = { [PREPARED]?: true }

/**
 * Sets one header field, its name lower-case, where the response the host's handler builds will
 * pick it up.
 */
export type PrepareHeader<Req> = (name: string, value: string, req: Req) => void

/**
 * Before the handler runs: sets the check's fields through the host's `prepare` (Hono's
 * `c.header()`, which the response `c.text()`, `c.json()` or `c.body()` builds then carries), so
 * that no `Headers` has to be read or copied afterwards. Only the first limiter of ours on a
 * request does: a nested one decorates the response after its handler, and the outer one then
 * finds its fields changed and merges, as without `prepare`. True when the fields were set.
 */
export function prepareHeaders<Req>(
  prepare: PrepareHeader<Req> | undefined,
  request: object,
  req: Req,
  pairs: readonly HeaderPair[],
): boolean {
  if (prepare === undefined || pairs.length === 0) return false
  const marked = request as Prepared
  if (marked[PREPARED] === true) return false
  try {
    marked[PREPARED] = true
  } catch {
    return false // a frozen request
  }
  for (const [name, value] of pairs) prepare(lowerName(name), value, req)
  return true
}

// A Fetch `Headers` lower-cases each name it is given: a new string, hashed anew, per call. The
// prepared fields go under their lower-case names (the same on the wire), each made once.
const LOWER = new Map<string, string>()

function lowerName(name: string): string {
  let lower = LOWER.get(name)
  if (lower === undefined) {
    lower = name.toLowerCase()
    // our standards name a dozen fields: a bound in case a caller brings names of its own
    if (LOWER.size < 64) LOWER.set(name, lower)
  }
  return lower
}

// Whether `res` carries every field as prepared, none replaced since.
function carries(res: Response, pairs: readonly HeaderPair[]): boolean {
  const { headers } = res
  for (const [name, value] of pairs) if (headers.get(lowerName(name)) !== value) return false
  return true
}

/**
 * {@link withHeaders} for the response to `request`: merged when another limiter of ours has
 * decorated it already (nested limiters), set directly otherwise; `request` is marked as
 * decorated. With `prepared` (see {@link prepareHeaders}), a response that carries the fields as
 * they were set goes as it is.
 */
export function decorate(
  request: object,
  res: Response,
  pairs: readonly HeaderPair[],
  check: RateLimitCheck,
  prepared = false,
): Response {
  if (pairs.length === 0) return res
  const ready = prepared && carries(res, pairs)
  const out = ready ? res : withHeaders(res, pairs, check, (request as Marked)[DECORATED] === true)
  mark(request)
  return out
}

/** A limited response (from `limitedResponse`, or `deny`'s 403) as a Fetch `Response`. */
export function refusal<Req>(
  limited: LimitedResponse,
  pairs: readonly HeaderPair[],
  respond: Respond<Req> | undefined,
  req: Req,
  request?: object,
): Response {
  if (request !== undefined && pairs.length > 0) mark(request)
  // a plain record: a host may write it as it is (@hono/node-server does), with no `Headers`
  const headers: Record<string, string> = {}
  for (const [name, value] of pairs) headers[name] = value
  headers['content-type'] = limited.contentType
  const init = { status: limited.status, headers }
  return respond === undefined ? new Response(limited.body, init) : respond(limited.body, init, req)
}

// The last record's names and how to list them (see `wireRecord`): one slot, so nothing grows;
// a limiter's refusals all carry the same names, in the same order.
let lastNames: readonly string[] = []
let lastLayout: readonly (readonly [string, string])[] | undefined = []

// Each name with its lower-case form, sorted by it; `undefined` when two names differ by case only.
function layoutOf(names: readonly string[]): readonly (readonly [string, string])[] | undefined {
  const layout = names.map((name) => [name, lowerName(name)] as const)
  layout.sort((a, b) => (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
  for (let i = 1; i < layout.length; i++)
    if (layout[i]?.[1] === layout[i - 1]?.[1]) return undefined
  return layout
}

// Whether `headers` has the names `names`, in that order (read without a list of them made).
function hasNames(headers: Record<string, string>, names: readonly string[]): boolean {
  let i = 0
  for (const name in headers) if (names[i++] !== name) return false
  return i === names.length
}

/**
 * `headers` listed as a Fetch `Headers` lists them: names lower-case, sorted. For a host that
 * writes a plain record as it is (@hono/node-server's own `Response`), the fields then go out as
 * they would from a `Headers`, with none built. `undefined` when two names differ by case only
 * (a `Headers` would keep one): build a `Headers` then.
 */
export function wireRecord(headers: Record<string, string>): Record<string, string> | undefined {
  if (!hasNames(headers, lastNames)) {
    lastNames = Object.keys(headers)
    lastLayout = layoutOf(lastNames)
  }
  if (lastLayout === undefined) return undefined
  const out: Record<string, string> = {}
  for (const [name, lower] of lastLayout) out[lower] = headers[name] as string
  return out
}

/** A refusal's status and header fields (a plain record, each name once). */
export interface RespondInit {
  status: number
  headers: Record<string, string>
}

/**
 * How a host builds a response from a body, its status and its header fields; `req` is the
 * request being refused (what the host's callbacks see).
 */
export type Respond<Req = unknown> = (body: string, init: RespondInit, req: Req) => Response
