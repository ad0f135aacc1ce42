// Merging several limiters' headers into one response: lists append, single values keep the strictest.
import type { HeaderPair } from './headers.js'

/** What a response holds for a header (Node's `getHeader` shape). */
export type HeaderValue = string | number | readonly string[] | undefined

function text(value: HeaderValue): string | undefined {
  if (value === undefined) return undefined
  return typeof value === 'object' ? value.join(', ') : String(value)
}

function remainingIn(value: string | undefined, pattern: RegExp): number {
  const match = value === undefined ? null : pattern.exec(value)
  return match === null ? Number.NaN : Number(match[1])
}

// A set of single-valued fields that together describe one limiter (see `keepsFound`).
interface Group {
  readonly names: readonly string[]
  readonly remaining: string
  readonly pattern: RegExp
}

// Single-valued groups: when several limiters answer, one limiter's fields are sent, all of them.
const GROUPS: readonly Group[] = [
  {
    names: ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'],
    remaining: 'ratelimit-remaining',
    pattern: /^\s*(\d+)/,
  },
  {
    names: ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'],
    remaining: 'x-ratelimit-remaining',
    pattern: /^\s*(\d+)/,
  },
  { names: ['ratelimit'], remaining: 'ratelimit', pattern: /remaining=(\d+)/ },
]

// The incoming values of the group's fields (a draft-10 `RateLimit` list member is none of them).
function fieldsOf(group: Group, pairs: readonly HeaderPair[]): Map<string, string> {
  const found = new Map<string, string>()
  for (const [name, value] of pairs) {
    const lower = name.toLowerCase()
    if (group.names.includes(lower) && !value.startsWith('"')) found.set(lower, value)
  }
  return found
}

// Whether the group the response holds stays, whole, and the incoming one's fields are dropped.
// A group is all or nothing: a field left from another limiter would mix two quotas
// (`RateLimit-Limit: 100` beside a 5-limit's `RateLimit-Remaining: 0`), and a merge sets fields,
// never removes one. So a set that lacks a field the response holds never replaces it (a
// fail-open decision states no remaining and no reset; a concurrency one, no reset), a set with
// more of the fields always does, and between equal ones the fewest remaining wins; on a tie,
// the inner limiter's (written after the outer one on Node, `'after'`; before it on Fetch).
function keepsFound(
  group: Group,
  pairs: readonly HeaderPair[],
  read: (name: string) => string | undefined,
  place: MemberPlace,
): boolean {
  const incoming = fieldsOf(group, pairs)
  if (incoming.size === 0) return false
  let held = 0
  for (const name of group.names) {
    const before = read(name)
    if (before === undefined || before === '') continue
    // a draft-10 list where the draft-7 dictionary goes: not this group's (see `inStyleFound`)
    if (before.trimStart().startsWith('"')) return false
    if (!incoming.has(name)) return true
    held++
  }
  if (held === 0 || incoming.size > held) return false
  const was = remainingIn(read(group.remaining), group.pattern)
  const now = remainingIn(incoming.get(group.remaining), group.pattern)
  if (was < now) return true
  if (now < was) return false
  return place === 'before'
}

/** This limiter's header pairs in another standard, for {@link mergeHeaders} to restyle with. */
export type Restyle = (standard: 'draft-10' | 'draft-7') => readonly HeaderPair[]

// The two fields written in two syntaxes: draft-10 lists of named members (`"name";q=..`) and the
// draft-6/7 forms (`100;w=60`, `limit=.., remaining=.., reset=..`).
const TWO_SYNTAXES: ReadonlySet<string> = new Set(['ratelimit', 'ratelimit-policy'])

// The incoming pairs, each `RateLimit` / `RateLimit-Policy` in the syntax the response already
// holds for it: the first style written for a field wins, and later limiters add their entry in
// it (a field in two syntaxes parses as neither). A field the other style leaves out (the
// remaining quota of a decision failureMode made) is dropped.
function inStyleFound(
  incoming: readonly HeaderPair[],
  current: (name: string) => HeaderValue,
  restyle: Restyle,
): readonly HeaderPair[] {
  let out: Array<HeaderPair | undefined> | undefined
  for (const [i, [name, value]] of incoming.entries()) {
    const lower = name.toLowerCase()
    if (!TWO_SYNTAXES.has(lower)) continue
    const before = text(current(name))?.trimStart()
    if (before === undefined || before === '') continue
    const draft10 = before.startsWith('"')
    if (draft10 === value.startsWith('"')) continue
    out ??= [...incoming]
    const other = restyle(draft10 ? 'draft-10' : 'draft-7').find(([n]) => n.toLowerCase() === lower)
    out[i] = other === undefined ? undefined : [name, other[1]]
  }
  return out === undefined ? incoming : out.filter((p): p is HeaderPair => p !== undefined)
}

/**
 * Where a limiter's list member goes among those already there: `'after'` (Node, where the
 * outer limiter writes first), `'before'` (Fetch, where the inner limiters have written when the
 * outer one decorates the response): either way the outer limiter's member comes first.
 */
export type MemberPlace = 'after' | 'before'

/**
 * Merges a limiter's header pairs into what the response already holds, so several limiters on
 * one route add up instead of overwriting: list fields (`RateLimit-Policy`, draft-10 `RateLimit`)
 * get one member per limiter (at `place`, default after the others), `Retry-After` keeps the
 * later instant, and single-valued sets (draft-6, draft-7 `RateLimit`, legacy) hold one limiter's
 * fields, all of them: the set with the most fields (a fail-open decision's lacks the quota, a
 * concurrency one's the reset), then the fewest remaining, then the inner limiter's. Returns the
 * pairs to set; `current(name)` reads the response (names are matched case-insensitively). With
 * `restyle`, a `RateLimit` or `RateLimit-Policy` field already written in the other syntax gets
 * this limiter's entry in that syntax, so no field mixes the two and no limiter's entry is lost.
 *
 * @example
 * for (const [name, value] of mergeHeaders(pairs, (n) => res.getHeader(n))) res.setHeader(name, value)
 */
export function mergeHeaders(
  incoming: readonly HeaderPair[],
  current: (name: string) => HeaderValue,
  restyle?: Restyle,
  place: MemberPlace = 'after',
): HeaderPair[] {
  const pairs = restyle === undefined ? incoming : inStyleFound(incoming, current, restyle)
  const merged = new Map<string, HeaderPair>()
  const read = (lower: string, name: string): string | undefined =>
    merged.get(lower)?.[1] ?? text(current(name))
  const keep = new Set<string>()
  for (const group of GROUPS)
    if (keepsFound(group, pairs, (name) => text(current(name)), place))
      for (const n of group.names) keep.add(n)
  for (const [name, value] of pairs) {
    const lower = name.toLowerCase()
    const before = read(lower, name)
    let next = value
    if (lower === 'ratelimit-policy' || (lower === 'ratelimit' && value.startsWith('"'))) {
      // A draft-7 `RateLimit` dictionary cannot take list members: replace it.
      if (
        before !== undefined &&
        before !== '' &&
        (lower === 'ratelimit-policy' || before.startsWith('"'))
      ) {
        const members = before.split(/\s*,\s*/)
        if (members.includes(value)) next = before
        else next = place === 'after' ? `${before}, ${value}` : `${value}, ${before}`
      }
    } else if (lower === 'retry-after') {
      const seconds = Number(before)
      if (Number.isFinite(seconds) && seconds > Number(value)) next = String(seconds)
    } else if (keep.has(lower)) {
      continue
    }
    merged.set(lower, [name, next])
  }
  return [...merged.values()]
}
