import { describe, it } from 'vitest'
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
})
