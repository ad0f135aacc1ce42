// Requests sent to a script directly, as a store batches them: for the tests that decide the same
// requests two ways on Redis and compare (batch-repeats.test.ts, packed-pair.test.ts).
import fc from 'fast-check'

/** Far enough ahead of the real clock that nothing written expires while a run looks at it. */
export const NOW_MS = 4_000_000_000_000

/** A penalty of `cost - PENALTY` (sent as 'p<cost>'; not for concurrency). */
export const PENALTY = 1000

/**
 * A request on one of three keys: a cost > 0 consumes, 0 peeks, < 0 refunds, PENALTY + c
 * penalizes c.
 */
export const requestArb = fc.record({
  key: fc.integer({ min: 0, max: 2 }),
  cost: fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: 1, max: 4 }) },
    { weight: 2, arbitrary: fc.constant(0) },
    { weight: 2, arbitrary: fc.integer({ min: -4, max: -1 }) },
    { weight: 2, arbitrary: fc.integer({ min: PENALTY + 1, max: PENALTY + 12 }) },
  ),
})
