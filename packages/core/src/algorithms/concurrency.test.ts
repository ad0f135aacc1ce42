import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { definePolicy } from '../policies/policy.js'
import { type ConcurrencyState, concurrency, leaseMembers } from './concurrency.js'

const policy = (limit: number, windowMs: number, retryAfter?: number) =>
  definePolicy({ algorithm: 'concurrency', limit, window: windowMs, retryAfter })

describe('concurrency', () => {
  it('holds leases until released or expired; two in one millisecond are two leases', () => {
    const p = policy(2, 1000)
    const a = concurrency.check(undefined, 0, p, 1, undefined, '1:a')
    const b = concurrency.check(a.state, 0, p, 1, undefined, '1:b')
    expect(a).toMatchObject({ allowed: true, remaining: 1, resetMs: 1000, ticket: '1:a' })
    expect(b).toMatchObject({ allowed: true, remaining: 0, ticket: '1:b' })
    const c = concurrency.check(b.state, 10, p, 1, undefined, '1:c')
    // nobody knows when a slot frees: the default estimate, 1 s, under the 990 ms to expiry
    expect(c).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 990, state: undefined })
    const released = concurrency.refund(b.state, 10, p, 0, '1:a')
    expect(
      concurrency.check(released.state ?? undefined, 10, p, 1, undefined, '1:c'),
    ).toMatchObject({
      allowed: true,
      remaining: 0,
    })
    // expiry frees them too
    expect(concurrency.check(b.state, 1000, p, 1, undefined, '1:d')).toMatchObject({
      allowed: true,
      remaining: 1,
    })
  })

  it('a lease of cost c holds c slots and gives all of them back', () => {
    const p = policy(5, 1000)
    expect(leaseMembers('3:x')).toEqual(['x', 'x#2', 'x#3'])
    const taken = concurrency.check(undefined, 0, p, 3, undefined, '3:x')
    expect(taken.remaining).toBe(2)
    expect(concurrency.check(taken.state, 0, p, 3, undefined, '3:y').allowed).toBe(false)
    expect(concurrency.refund(taken.state, 1, p, 0, '3:x')).toEqual({ state: null, ttlMs: 0 })
  })

  it('retryAfterMs is the estimate, never later than enough leases expire; peeks and refusals write nothing', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 5000 }),
        fc.integer({ min: 1, max: 5000 }),
        fc.array(fc.record({ advance: fc.nat(400), cost: fc.integer({ min: 0, max: 6 }) }), {
          maxLength: 30,
        }),
        (limit, windowMs, retryAfter, ops) => {
          const p = policy(limit, windowMs, retryAfter)
          let state: ConcurrencyState | undefined
          let now = 0
          let n = 0
          for (const op of ops) {
            now += op.advance
            const cost = Math.min(op.cost, limit)
            const o = concurrency.check(state, now, p, cost, undefined, `${cost}:l${n++}`)
            if (!o.allowed) {
              expect(o.state).toBeUndefined()
              expect(o.retryAfterMs).toBeGreaterThan(0)
              expect(o.retryAfterMs).toBeLessThanOrEqual(retryAfter)
              // waiting until leases expire on their own always admits
              const bound = o.resetMs
              expect(o.retryAfterMs).toBeLessThanOrEqual(bound)
              if (o.retryAfterMs < retryAfter) {
                const need = cost === 0 ? 1 : cost
                expect(
                  concurrency.check(state, now + o.retryAfterMs, p, need, undefined, 'x:y').allowed,
                ).toBe(true)
                expect(
                  concurrency.check(state, now + o.retryAfterMs - 1, p, need, undefined, 'x:y')
                    .allowed,
                ).toBe(false)
              }
            } else if (cost === 0) expect(o.state).toBeUndefined()
            if (o.state !== undefined) state = o.state
          }
        },
      ),
      { numRuns: 300 },
    )
  })
})
