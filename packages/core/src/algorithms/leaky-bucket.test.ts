import { describe, it } from 'vitest'
import { TWINS } from './index.js'
import { runTable } from './table.js'

describe('leaky-bucket', () => {
  it('fills to burst and drains at limit per window', () => {
    runTable(
      TWINS['leaky-bucket'],
      { algorithm: 'leaky-bucket', limit: 10, window: 1000, burst: 2 },
      [
        { t: 0, allowed: true, remaining: 1, resetMs: 100 },
        { t: 0, allowed: true, remaining: 0, resetMs: 200 },
        { t: 50, allowed: false, retryAfterMs: 50 },
        { t: 100, allowed: true, remaining: 0 },
        { t: 1000, cost: 2, allowed: true },
      ],
    )
  })
})
