import { describe, expect, it } from 'vitest'
import { definePolicy } from '../policies/policy.js'
import { fixedWindow } from './fixed-window.js'
import { runTable } from './table.js'

describe('fixed-window', () => {
  it('opens a window at the first request and counts up to limit', () => {
    runTable(fixedWindow, { algorithm: 'fixed-window', limit: 3, window: 1000 }, [
      { t: 100, allowed: true, remaining: 2, resetMs: 1000 },
      { t: 500, allowed: true, remaining: 1, resetMs: 600 },
      { t: 500, allowed: true, remaining: 0, resetMs: 600 },
      { t: 999, allowed: false, remaining: 0, retryAfterMs: 101 },
      { t: 1099, allowed: false, retryAfterMs: 1 },
      { t: 1100, allowed: true, remaining: 2, resetMs: 1000 },
    ])
  })
  it('counts cost and rejects without consuming', () => {
    runTable(fixedWindow, { algorithm: 'fixed-window', limit: 5, window: 100 }, [
      { t: 0, cost: 4, allowed: true, remaining: 1 },
      { t: 1, cost: 2, allowed: false, remaining: 1, retryAfterMs: 99 },
      { t: 2, cost: 1, allowed: true, remaining: 0 },
    ])
  })
  it('ends an open window no later than a shortened window from now; a longer one waits', () => {
    const long = definePolicy({ algorithm: 'fixed-window', limit: 2, window: 10_000 })
    const short = definePolicy({ algorithm: 'fixed-window', limit: 2, window: 2_000 })
    const first = fixedWindow.check(undefined, 0, long, 1)
    expect(first.state).toEqual({ endMs: 10_000, count: 1 })
    // At 1 s under a 2 s window the open window ends at 3 s, not 10 s; its count is kept.
    const shrunk = fixedWindow.check(first.state, 1_000, short, 1)
    expect(shrunk).toMatchObject({ allowed: true, remaining: 0, resetMs: 2_000, ttlMs: 2_000 })
    expect(fixedWindow.check(shrunk.state, 2_999, short, 1)).toMatchObject({ allowed: false })
    expect(fixedWindow.check(shrunk.state, 3_000, short, 1)).toMatchObject({
      allowed: true,
      remaining: 1,
    })
    // Back to the long window: the open window keeps its end.
    expect(fixedWindow.check(shrunk.state, 2_000, long, 0)).toMatchObject({ resetMs: 1_000 })
  })
})
