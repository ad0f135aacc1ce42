// Random traffic shared by the fast-path property tests: window lengths around the 50 ms where
// rounding matters, and the time between two requests (mostly none or a little, now and then
// past a window).
import fc from 'fast-check'

export const windowMsArb = fc.oneof(
  fc.integer({ min: 1, max: 50 }),
  fc.integer({ min: 51, max: 5000 }),
)

export const advanceMsArb = fc.oneof(
  { weight: 4, arbitrary: fc.constant(0) },
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 200 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 20_000 }) },
)
