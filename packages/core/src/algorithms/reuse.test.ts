// A twin given a state object to reuse (as MemoryStore gives it the key's stored state) decides
// exactly as with fresh objects, and leaves that object alone unless it writes a state.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ALGORITHMS, definePolicy } from '../policies/policy.js'
import { TWINS } from './index.js'
import type { SlidingLogState } from './sliding-log.js'

const stepArb = fc.record({
  advanceMs: fc.nat({ max: 3000 }),
  // 0 peeks
  cost: fc.integer({ min: 0, max: 12 }),
  // the store found the key expired: no state, but its old object is still there to reuse
  expired: fc.boolean(),
})

// What a state holds: a sliding log updated in place may keep entries that left the window
// before its `head`; they are not part of it.
function held(state: unknown): unknown {
  if (state === undefined || !('entries' in (state as object))) return state
  const { entries, sum, head = 0 } = state as SlidingLogState
  return { entries: entries.slice(head), sum }
}

describe.each(ALGORITHMS)('%s', (algorithm) => {
  const twin = TWINS[algorithm]

  it('decides the same with and without a reused state object', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 1, max: 5000 }),
        fc.array(stepArb, { minLength: 1, maxLength: 40 }),
        (limit, window, steps) => {
          const policy = definePolicy({ algorithm, limit, window })
          let fresh: unknown
          let reused: unknown
          let now = 1_700_000_000_000
          for (const { advanceMs, cost, expired } of steps) {
            now += advanceMs
            const c = Math.min(cost, policy.burst)
            const before = structuredClone(reused)
            const a = twin.check(expired ? undefined : fresh, now, policy, c)
            const b = twin.check(expired ? undefined : reused, now, policy, c, reused)
            expect({ ...b, state: undefined }).toEqual({ ...a, state: undefined })
            expect(held(b.state)).toEqual(held(a.state))
            // refused or peeked: nothing written, so the stored object must be as it was
            if (b.state === undefined) expect(reused).toEqual(before)
            if (a.state !== undefined) fresh = a.state
            if (b.state !== undefined) reused = b.state
          }
        },
      ),
      { numRuns: 300 },
    )
  })
})

// MemoryStore relies on this so a busy key keeps one state object (and a sliding log its array).
it.each(ALGORITHMS)('%s writes an admission into the object it is given', (algorithm) => {
  const policy = definePolicy({ algorithm, limit: 5, window: 1000 })
  const first = TWINS[algorithm].check(undefined, 0, policy, 1).state
  expect(TWINS[algorithm].check(first, 10, policy, 1, first).state).toBe(first)
})
