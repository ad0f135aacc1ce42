import { describe, expect, it } from 'vitest'
import { definePolicy } from '../policies/policy.js'
import { gcra } from './gcra.js'
import { runTable } from './table.js'

describe('gcra', () => {
  it('spaces requests by window/limit with a burst tolerance', () => {
    runTable(gcra, { algorithm: 'gcra', limit: 10, window: 1000, burst: 3 }, [
      { t: 0, allowed: true, remaining: 2, resetMs: 100 },
      { t: 0, allowed: true, remaining: 1 },
      { t: 0, allowed: true, remaining: 0, resetMs: 300 },
      { t: 0, allowed: false, retryAfterMs: 100 },
      { t: 100, allowed: true, remaining: 0 },
    ])
  })
  it('keeps the TAT exact when the emission interval is fractional', () => {
    // 3 per second: T = 333.33 ms; three at once fit a burst of 3 exactly.
    const policy = definePolicy({ algorithm: 'gcra', limit: 3, window: 1000 })
    let state = gcra.check(undefined, 0, policy, 1).state
    state = gcra.check(state, 0, policy, 1).state
    const third = gcra.check(state, 0, policy, 1)
    expect(third.allowed).toBe(true)
    expect(third.state).toEqual({ ms: 1000, frac: 0, den: 3 })
    expect(gcra.check(third.state, 333, policy, 1).allowed).toBe(false)
    expect(gcra.check(third.state, 334, policy, 1).allowed).toBe(true)
  })
})
