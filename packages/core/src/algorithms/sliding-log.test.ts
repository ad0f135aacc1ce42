import { describe, expect, it } from 'vitest'
import { definePolicy } from '../policy.js'
import { slidingLog } from './sliding-log.js'
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
})
