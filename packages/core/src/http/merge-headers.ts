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

// Single-valued groups: when several limiters answer, the one with the fewest remaining wins.
const GROUPS: ReadonlyArray<{ names: readonly string[]; remaining: string; pattern: RegExp }> = [
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

/**
 * Merges a limiter's header pairs into what the response already holds, so several limiters on
 * one route add up instead of overwriting: list fields (`RateLimit-Policy`, draft-10 `RateLimit`)
 * get one member per limiter, `Retry-After` keeps the later instant, and single-valued sets
 * (draft-6, draft-7 `RateLimit`, legacy) keep the limiter with the fewest remaining. Returns the
 * pairs to set; `current(name)` reads the response (names are matched case-insensitively).
 *
 * @example
 * for (const [name, value] of mergeHeaders(pairs, (n) => res.getHeader(n))) res.setHeader(name, value)
 */
export function mergeHeaders(
  incoming: readonly HeaderPair[],
  current: (name: string) => HeaderValue,
): HeaderPair[] {
  const merged = new Map<string, HeaderPair>()
  const read = (lower: string, name: string): string | undefined =>
    merged.get(lower)?.[1] ?? text(current(name))
  const keep = new Set<string>()
  for (const group of GROUPS) {
    const pair = incoming.find(
      ([n, v]) => n.toLowerCase() === group.remaining && !v.startsWith('"'),
    )
    if (pair === undefined) continue
    const before = read(group.remaining, pair[0])
    if (before?.startsWith('"')) continue
    if (remainingIn(before, group.pattern) < remainingIn(pair[1], group.pattern))
      for (const n of group.names) keep.add(n)
  }
  for (const [name, value] of incoming) {
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
        next = members.includes(value) ? before : `${before}, ${value}`
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
