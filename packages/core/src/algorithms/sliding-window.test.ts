import { describe, it } from 'vitest'
import { slidingWindow } from './sliding-window.js'
import { runTable } from './table.js'

describe('sliding-window', () => {
  it('weights the previous window by its overlap', () => {
    // Windows are aligned to multiples of 1000 ms.
    runTable(slidingWindow, { algorithm: 'sliding-window', limit: 4, window: 1000 }, [
      { t: 0, allowed: true, remaining: 3 },
      { t: 10, allowed: true },
      { t: 20, allowed: true },
      { t: 30, allowed: true, remaining: 0, resetMs: 1970 },
      { t: 40, allowed: false, retryAfterMs: 960 + 250 },
      // at 1250: previous 4 x 750/1000 = 3, so one more fits
      { t: 1250, allowed: true, remaining: 0 },
      { t: 1251, allowed: false, retryAfterMs: 249 },
      { t: 1500, allowed: true },
    ])
  })
  it('forgets a window two windows old', () => {
    runTable(slidingWindow, { algorithm: 'sliding-window', limit: 2, window: 100 }, [
      { t: 0, cost: 2, allowed: true, remaining: 0 },
      { t: 250, cost: 2, allowed: true, remaining: 0 },
    ])
  })
})
