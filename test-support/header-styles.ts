// Test support: two limiters with different header styles on one response (a global one and a
// route one), checked on every adapter: no field in two syntaxes, no limiter's entry dropped.
import { expect } from 'vitest'

/** Header styles to combine: each as `headers` takes it. */
export const STYLES: ReadonlyArray<string | readonly string[]> = [
  'draft-10',
  'draft-7',
  'draft-6',
  'legacy',
  ['draft-7', 'legacy'],
]

/** Every ordered pair of different styles: [global's, route's]. */
export const STYLE_PAIRS = STYLES.flatMap((a) =>
  STYLES.filter((b) => b !== a).map((b) => [a, b] as const),
)

const writes = (style: string | readonly string[], field: 'policy' | 'ratelimit'): boolean => {
  const list = typeof style === 'string' ? [style] : style
  return list.some((s) =>
    field === 'policy' ? s !== 'legacy' : s === 'draft-10' || s === 'draft-7',
  )
}

/**
 * Checks the fields of a response from a global limiter named `globalName` (style `a`, limit 5,
 * one request so far) and a route limiter named `routeName` (style `b`, limit 2).
 */
export function expectStylesMerged(
  headers: Record<string, unknown>,
  [a, b]: readonly [string | readonly string[], string | readonly string[]],
  globalName: string,
  routeName: string,
): void {
  const policy = headers['ratelimit-policy'] as string | undefined
  if (policy !== undefined) {
    const members = policy.split(/\s*,\s*/)
    if (policy.startsWith('"')) {
      for (const m of members) expect(m, policy).toMatch(/^"[^"]+";q=\d+;w=\d+$/)
      if (writes(a, 'policy')) expect(policy).toContain(`"${globalName}"`)
      if (writes(b, 'policy')) expect(policy).toContain(`"${routeName}"`)
    } else {
      for (const m of members) expect(m, policy).toMatch(/^\d+;w=\d+$/)
      if (writes(a, 'policy')) expect(members).toContain('5;w=60')
      if (writes(b, 'policy')) expect(members).toContain('2;w=60')
    }
  }
  const rateLimit = headers.ratelimit as string | undefined
  if (rateLimit === undefined) return
  if (rateLimit.startsWith('"')) {
    for (const m of rateLimit.split(/\s*,\s*/))
      expect(m, rateLimit).toMatch(/^"[^"]+";r=\d+;t=\d+$/)
    if (writes(a, 'ratelimit')) expect(rateLimit).toContain(`"${globalName}";r=4;`)
    if (writes(b, 'ratelimit')) expect(rateLimit).toContain(`"${routeName}";r=1;`)
  } else {
    expect(rateLimit).toMatch(/^limit=\d+, remaining=\d+, reset=\d+$/)
    // One dictionary: when both limiters send one, the fewest remaining (the route's) wins.
    if (writes(a, 'ratelimit') && writes(b, 'ratelimit')) expect(rateLimit).toContain('remaining=1')
  }
}
