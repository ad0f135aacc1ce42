import { describe, expect, it } from 'vitest'
import { definePolicy } from '../policies/policy.js'
import { type SlidingLogState, slidingLog } from './sliding-log.js'
import { runTable } from './table.js'

describe('sliding-log', () => {
  it('admits at most limit in any window-long interval', () => {
    runTable(slidingLog, { algorithm: 'sliding-log', limit: 3, window: 1000 }, [
      { t: 0, allowed: true, remaining: 2, resetMs: 1000 },
      { t: 400, allowed: true, remaining: 1, resetMs: 1000 },
      { t: 800, allowed: true, remaining: 0, resetMs: 1000 },
      { t: 999, allowed: false, retryAfterMs: 1 },
      { t: 1000, allowed: true, remaining: 0 },
      { t: 1001, allowed: false, retryAfterMs: 399 },
    ])
  })
  it('frees enough cost for a large request', () => {
    runTable(slidingLog, { algorithm: 'sliding-log', limit: 5, window: 100 }, [
      { t: 0, cost: 2, allowed: true },
      { t: 10, cost: 2, allowed: true },
      { t: 20, cost: 1, allowed: true, remaining: 0 },
      { t: 30, cost: 4, allowed: false, retryAfterMs: 80 },
    ])
  })
  it('a refund with the ticket removes exactly that entry', () => {
    const policy = definePolicy({ algorithm: 'sliding-log', limit: 3, window: 1000 })
    const a = slidingLog.check(undefined, 0, policy, 1)
    const b = slidingLog.check(a.state, 500, policy, 1)
    const refunded = slidingLog.refund(b.state, 600, policy, 1, a.ticket)
    expect(refunded.state?.entries.map((e) => e.atMs)).toEqual([500])
  })
  it('a log updated in place keeps at most twice its live entries, and decides as a copied one', () => {
    const policy = definePolicy({ algorithm: 'sliding-log', limit: 1000, window: 100 })
    let copied: SlidingLogState | undefined
    let inPlace: SlidingLogState | undefined
    let longest = 0
    for (let t = 0; t < 5000; t++) {
      const a = slidingLog.check(copied, t, policy, 1)
      const b = slidingLog.check(inPlace, t, policy, 1, inPlace)
      expect(b.remaining).toBe(a.remaining)
      copied = a.state ?? copied
      if (inPlace !== undefined) expect(b.state).toBe(inPlace)
      inPlace = b.state ?? inPlace
      longest = Math.max(longest, inPlace?.entries.length ?? 0)
    }
    // 100 entries are live at a time (one per ms); the ones that left are dropped in batches
    expect(longest).toBeLessThanOrEqual(2 * 100 + 1)
    expect(copied?.entries.length).toBe(100)
  })
})
