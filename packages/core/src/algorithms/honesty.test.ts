// Properties every twin obeys, for all inputs: Retry-After is honest and minimal, rejections
// change nothing, and token-bucket and leaky-bucket (decided with GCRA state) match independent
// bucket models.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type Algorithm, definePolicy, type Policy, RATE_ALGORITHMS } from '../policies/policy.js'
import { TWINS } from './index.js'

const COUNTING = new Set<Algorithm>(['fixed-window', 'sliding-window', 'sliding-log'])

const policyArb = (algorithm: Algorithm): fc.Arbitrary<Policy> =>
  fc
    .record({
      limit: fc.integer({ min: 1, max: 20 }),
      window: fc.integer({ min: 1, max: 10_000 }),
      burst: fc.integer({ min: 1, max: 40 }),
    })
    .map(({ limit, window, burst }) =>
      definePolicy({ algorithm, limit, window, burst: COUNTING.has(algorithm) ? limit : burst }),
    )

const trafficArb = fc.array(
  fc.record({ advanceMs: fc.nat({ max: 3000 }), cost: fc.integer({ min: 1, max: 40 }) }),
  { maxLength: 40 },
)

/** Replays traffic on one key and returns the final state and time. */
function replay(
  algorithm: Algorithm,
  policy: Policy,
  traffic: ReadonlyArray<{ advanceMs: number; cost: number }>,
  startMs: number,
) {
  const twin = TWINS[algorithm]
  let state: unknown
  let now = startMs
  for (const { advanceMs, cost } of traffic) {
    now += advanceMs
    const outcome = twin.check(state, now, policy, Math.min(cost, policy.burst))
    if (outcome.state !== undefined) state = outcome.state
  }
  return { state, now }
}

describe.each(RATE_ALGORITHMS)('%s', (algorithm) => {
  const twin = TWINS[algorithm]

  it('retryAfterMs is honest and minimal: allowed after waiting it out, rejected 1 ms earlier', () => {
    fc.assert(
      fc.property(
        policyArb(algorithm),
        trafficArb,
        fc.integer({ min: 1, max: 40 }),
        (policy, traffic, rawCost) => {
          const { state, now } = replay(algorithm, policy, traffic, 1_700_000_000_000)
          const cost = Math.min(rawCost, policy.burst)
          const first = twin.check(state, now, policy, cost)
          if (first.allowed) {
            expect(first.retryAfterMs).toBe(0)
            return
          }
          expect(first.retryAfterMs).toBeGreaterThan(0)
          expect(twin.check(state, now + first.retryAfterMs, policy, cost).allowed).toBe(true)
          expect(twin.check(state, now + first.retryAfterMs - 1, policy, cost).allowed).toBe(false)
        },
      ),
      { numRuns: 500 },
    )
  })

  it('under an unchanged policy, a rejected request or a peek writes nothing', () => {
    fc.assert(
      fc.property(
        policyArb(algorithm),
        trafficArb,
        fc.integer({ min: 0, max: 40 }),
        (policy, traffic, rawCost) => {
          const { state, now } = replay(algorithm, policy, traffic, 1_700_000_000_000)
          const cost = Math.min(rawCost, policy.burst)
          const outcome = twin.check(state, now, policy, cost)
          if (!outcome.allowed || cost === 0) expect(outcome.state).toBeUndefined()
        },
      ),
      { numRuns: 300 },
    )
  })

  it('resetMs is 0 exactly when the key is at full capacity, and state is empty after its TTL', () => {
    fc.assert(
      fc.property(policyArb(algorithm), trafficArb, (policy, traffic) => {
        const { state, now } = replay(algorithm, policy, traffic, 1_700_000_000_000)
        const peek = twin.check(state, now, policy, 0)
        const fresh = twin.check(undefined, now, policy, 0)
        expect(peek.resetMs === 0).toBe(peek.remaining === fresh.remaining)
        // After resetMs the key decides exactly like a fresh one.
        const later = now + peek.resetMs
        expect(twin.check(state, later, policy, 0)).toEqual(twin.check(undefined, later, policy, 0))
      }),
      { numRuns: 300 },
    )
  })

  it('a request in the same millisecond as others is counted', () => {
    const policy = definePolicy({ algorithm, limit: 5, window: 1000 })
    let state: unknown
    const allowed: boolean[] = []
    for (let i = 0; i < 8; i++) {
      const outcome = twin.check(state, 1_700_000_000_000, policy, 1)
      if (outcome.state !== undefined) state = outcome.state
      allowed.push(outcome.allowed)
    }
    expect(allowed).toEqual([true, true, true, true, true, false, false, false])
  })
})

// Independent bucket models (tokens or level plus a timestamp, in integer units: one request is
// `window` units, refill or drain `limit` units per ms): the oracles the GCRA-based twins of
// token-bucket and leaky-bucket must match.
function tokenOracle(p: Policy) {
  const capacity = p.burst * p.windowMs
  let units = capacity
  let at = 0
  return (now: number, cost: number) => {
    units = Math.min(capacity, units + (now - at) * p.limit)
    at = now
    const peek = cost === 0
    const need = (peek ? 1 : cost) * p.windowMs
    const allowed = units >= need
    const after = allowed && !peek ? units - need : units
    if (allowed && !peek) units = after
    return {
      allowed,
      remaining: Math.floor(after / p.windowMs),
      resetMs: Math.ceil((capacity - after) / p.limit),
      retryAfterMs: allowed ? 0 : Math.ceil((need - units) / p.limit),
    }
  }
}

function leakyOracle(p: Policy) {
  const capacity = p.burst * p.windowMs
  let level = 0
  let at = 0
  return (now: number, cost: number) => {
    level = Math.max(0, level - (now - at) * p.limit)
    at = now
    const peek = cost === 0
    const need = (peek ? 1 : cost) * p.windowMs
    const allowed = level + need <= capacity
    if (allowed && !peek) level += need
    return {
      allowed,
      remaining: Math.max(0, Math.floor((capacity - level) / p.windowMs)),
      resetMs: Math.ceil(level / p.limit),
      retryAfterMs: allowed ? 0 : Math.ceil((level + need - capacity) / p.limit),
    }
  }
}

describe('token-bucket and leaky-bucket (decided with GCRA state)', () => {
  it.each([
    ['token-bucket', tokenOracle],
    ['leaky-bucket', leakyOracle],
  ] as const)(
    '%s makes exactly the decisions of an independent bucket model',
    (algorithm, oracleOf) => {
      fc.assert(
        fc.property(policyArb('gcra'), trafficArb, (p, traffic) => {
          const policy = definePolicy({
            algorithm,
            limit: p.limit,
            window: p.windowMs,
            burst: p.burst,
          })
          const oracle = oracleOf(policy)
          const twin = TWINS[algorithm]
          let state: unknown
          let now = 1_700_000_000_000
          oracle(now, 0)
          for (const { advanceMs, cost } of traffic) {
            now += advanceMs
            const c = Math.min(cost, policy.burst)
            const {
              allowed,
              remaining,
              resetMs,
              retryAfterMs,
              state: next,
            } = twin.check(state, now, policy, c)
            if (next !== undefined) state = next
            expect({ allowed, remaining, resetMs, retryAfterMs }).toEqual(oracle(now, c))
          }
        }),
        { numRuns: 300 },
      )
    },
  )
})
