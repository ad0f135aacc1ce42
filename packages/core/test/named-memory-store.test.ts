// Limiters given the same `name` and no store share counters in memory, as on Redis (an outside
// review: "give the limiters the same name" shared nothing on the default store, so two routes
// meant to share one budget of 3 let 6 attempts through); unnamed limiters keep their own.
import { describe, expect, it } from 'vitest'
import { createLimiter } from '../src/index.js'

let unique = 0

describe('the default store', () => {
  it('limiters with one name share one budget', async () => {
    const name = `auth${unique++}`
    const login = createLimiter({ limit: 3, window: '1m', algorithm: 'fixed-window', name })
    const reset = createLimiter({ limit: 3, window: '1m', algorithm: 'fixed-window', name })
    const allowed: boolean[] = []
    for (const limiter of [login, login, login, reset, reset, reset])
      allowed.push((await limiter.consume('client')).allowed)
    expect(allowed).toEqual([true, true, true, false, false, false])
  })

  it('a prefix keeps two names apart, and unnamed limiters keep their own', async () => {
    const name = `auth${unique++}`
    const a = createLimiter({ limit: 1, window: '1m', name, prefix: 'a:' })
    const b = createLimiter({ limit: 1, window: '1m', name, prefix: 'b:' })
    expect((await a.consume('client')).allowed).toBe(true)
    expect((await b.consume('client')).allowed).toBe(true)
    const c = createLimiter({ limit: 1, window: '1m' })
    const d = createLimiter({ limit: 1, window: '1m' })
    expect((await c.consume('client')).allowed).toBe(true)
    expect((await d.consume('client')).allowed).toBe(true)
  })

  it('one name with two algorithms is refused, as on a shared store', () => {
    const name = `auth${unique++}`
    const first = createLimiter({ limit: 3, window: '1m', algorithm: 'fixed-window', name })
    expect(() => createLimiter({ limit: 3, window: '1m', algorithm: 'gcra', name })).toThrow(
      expect.objectContaining({ code: 'ERR_LIMITER_CONFLICT' }),
    )
    expect(first.policy.algorithm).toBe('fixed-window')
  })
})
