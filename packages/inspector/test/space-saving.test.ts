// Space-Saving on a Zipf stream: the N/k bound holds for every tracked key, memory stays at k
// counters, and the heaviest keys are found. Prints the table the README quotes.
import { describe, expect, it } from 'vitest'
import { mergeSummaries, SpaceSaving } from '../src/index.js'

/** A deterministic Zipf(s) stream of `n` draws over `keys` keys (xorshift, inverse CDF). */
function zipfStream(n: number, keys: number, s: number, seed = 42): string[] {
  const cdf = new Float64Array(keys)
  let total = 0
  for (let i = 0; i < keys; i++) {
    total += 1 / (i + 1) ** s
    cdf[i] = total
  }
  let x = seed >>> 0 || 1
  const out = new Array<string>(n)
  for (let j = 0; j < n; j++) {
    x ^= x << 13
    x >>>= 0
    x ^= x >>> 17
    x ^= x << 5
    x >>>= 0
    const u = (x / 2 ** 32) * total
    let lo = 0
    let hi = keys - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if ((cdf[mid] as number) < u) lo = mid + 1
      else hi = mid
    }
    out[j] = `key:${lo}`
  }
  return out
}

function truth(stream: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const key of stream) counts.set(key, (counts.get(key) ?? 0) + 1)
  return counts
}

describe('SpaceSaving', () => {
  it('holds the N/k bound and finds the top keys of a 1M Zipf stream over 100k keys', {
    timeout: 180_000,
  }, () => {
    const stream = zipfStream(1_000_000, 100_000, 1.1)
    const exact = truth(stream)
    const trueTop = [...exact.entries()].sort((a, b) => b[1] - a[1])
    const rows: string[] = []
    for (const k of [16, 64, 256, 1024]) {
      const summary = new SpaceSaving(k)
      for (const key of stream) summary.add(key)
      expect(summary.size).toBe(k)
      let maxOver = 0
      for (const hit of summary.top()) {
        const real = exact.get(hit.key) ?? 0
        expect(hit.count).toBeGreaterThanOrEqual(real)
        expect(hit.count - real).toBeLessThanOrEqual(hit.error)
        expect(hit.error).toBeLessThanOrEqual(stream.length / k)
        maxOver = Math.max(maxOver, hit.count - real)
      }
      // Every key seen more than N/k times is tracked.
      const tracked = new Set(summary.top().map((h) => h.key))
      for (const [key, count] of trueTop) {
        if (count <= stream.length / k) break
        expect(tracked.has(key)).toBe(true)
      }
      const found = (n: number) =>
        summary.top(n).filter((h) => trueTop.slice(0, n).some(([key]) => key === h.key)).length
      rows.push(
        `| ${k} | ${found(10)}/10 | ${found(20)}/20 | ${maxOver} | ${Math.floor(stream.length / k)} |`,
      )
    }
    console.log(
      `| k (keys tracked) | true top 10 found | true top 20 found | max overestimate | N/k bound |\n| --- | --- | --- | --- | --- |\n${rows.join('\n')}`,
    )
  })

  it('keeps its memory at k counters whatever the stream', () => {
    const summary = new SpaceSaving(32)
    for (let i = 0; i < 200_000; i++) summary.add(`unique:${i}`)
    expect(summary.size).toBe(32)
    expect(summary.n).toBe(200_000)
  })

  it('merges summaries keeping the bound: a key missing from a full one is charged its minimum', () => {
    const streams = [0, 1, 2].map((i) => zipfStream(50_000, 5_000, 1.2, 7 + i))
    const summaries = streams.map((stream) => {
      const summary = new SpaceSaving(64)
      for (const key of stream) summary.add(key)
      return summary.data()
    })
    const exact = truth(streams.flat())
    const n = streams.reduce((sum, s) => sum + s.length, 0)
    const merged = mergeSummaries(summaries, 64)
    expect(merged.length).toBe(64)
    for (const hit of merged) {
      const real = exact.get(hit.key) ?? 0
      expect(hit.count).toBeGreaterThanOrEqual(real)
      expect(hit.count - real).toBeLessThanOrEqual(n / 64)
    }
    expect(merged[0]?.key).toBe('key:0')
  })
})
