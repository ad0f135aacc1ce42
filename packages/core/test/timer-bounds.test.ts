// Every duration that becomes a timer is at most 2^31 - 1 ms: Node fires a longer timer at once,
// so `sweepIntervalMs: 2 ** 31` was a 1 ms sweep loop and `timeout: 2 ** 31` a 1 ms re-arm.
import { describe, expect, it } from 'vitest'
import { createLimiter, MemoryStore } from '../src/index.js'

const MAX = 2 ** 31 - 1

describe('timer bounds', () => {
  it.each([2 ** 31, 2 ** 40, Number.MAX_SAFE_INTEGER])(
    'MemoryStore sweepIntervalMs %d is a RangeError naming it',
    (ms) => {
      expect(() => new MemoryStore({ sweepIntervalMs: ms })).toThrow(RangeError)
      expect(() => new MemoryStore({ sweepIntervalMs: ms })).toThrow(
        /`sweepIntervalMs`: .*2147483647/,
      )
    },
  )

  it.each([2 ** 31, '25d', '600h'])('timeout %s is a RangeError naming it', (timeout) => {
    const attempt = () => createLimiter({ limit: 1, window: '1s', timeout })
    expect(attempt).toThrow(RangeError)
    expect(attempt).toThrow(/`timeout`: must be at most 2147483647 ms/)
  })

  it('the largest timer is accepted', async () => {
    const store = new MemoryStore({ sweepIntervalMs: MAX })
    await store.close()
    expect(() => createLimiter({ limit: 1, window: '1s', timeout: MAX })).not.toThrow()
    expect(() => createLimiter({ limit: 1, window: '1s', timeout: '24d' })).not.toThrow()
  })
})
