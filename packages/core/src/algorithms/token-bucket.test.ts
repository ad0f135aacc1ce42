import { describe, it } from 'vitest'
import { TWINS } from './index.js'
import { runTable } from './table.js'

describe('token-bucket', () => {
  it('starts full at burst and refills limit per window', () => {
    runTable(
      TWINS['token-bucket'],
      { algorithm: 'token-bucket', limit: 2, window: 1000, burst: 3 },
      [
        { t: 0, allowed: true, remaining: 2, resetMs: 500 },
        { t: 0, allowed: true, remaining: 1 },
        { t: 0, allowed: true, remaining: 0, resetMs: 1500 },
        { t: 0, allowed: false, retryAfterMs: 500 },
        { t: 499, allowed: false, retryAfterMs: 1 },
        { t: 500, allowed: true, remaining: 0 },
        { t: 2000, cost: 3, allowed: true, remaining: 0 },
      ],
    )
  })
  it('handles fractional refill exactly (3 per second)', () => {
    runTable(TWINS['token-bucket'], { algorithm: 'token-bucket', limit: 3, window: 1000 }, [
      { t: 0, cost: 3, allowed: true, remaining: 0 },
      { t: 333, allowed: false, retryAfterMs: 1 },
      { t: 334, allowed: true },
    ])
  })
})
