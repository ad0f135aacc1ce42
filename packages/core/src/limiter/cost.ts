// The error for a cost no policy can take: consume's (createLimiter's costChecker) and acquire's.
import { LimiterRangeError } from '../common/errors.js'

/**
 * The error for a `cost` that is not a whole number from `min` (0 peeks) up to `maxCost`, the
 * smallest burst of the limiter's `count` policies, the most that can ever pass: consume's and
 * acquire's.
 */
export function costError(
  cost: unknown,
  min: 0 | 1,
  maxCost: number,
  count: number,
): LimiterRangeError {
  const burst = count > 1 ? 'smallest policy burst' : "policy's burst"
  const why =
    typeof cost === 'number' && Number.isInteger(cost) && cost > maxCost
      ? `can never be admitted: it exceeds the ${burst} (${maxCost})`
      : `must be an integer >= ${min}`
  return new LimiterRangeError('cost', cost, why, 'ERR_LIMITER_COST')
}
