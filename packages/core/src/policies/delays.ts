// A limiter's `maxDelay` and `delayAfter`: validated, and set on the policies that reserve.
import { parseWait } from '../common/duration.js'
import { LimiterRangeError, LimiterTypeError } from '../common/errors.js'
import { MAX_UNITS, type NamedPolicy, RESERVING } from './policy.js'

/** What {@link withDelays} reads. */
export interface DelayOptions {
  readonly maxDelay?: unknown
  readonly delayAfter?: unknown
}

/**
 * The policies with the limiter's waiting rule set on each that can reserve a later slot (GCRA,
 * token-bucket, leaky-bucket): the first `delayAfter` (default `burst`) of a burst pass at once,
 * the rest reserve the slot they will pass at, up to `maxDelay` ahead; `delayAfter` alone allows
 * waiting until `burst` is used up (nginx's `limit_req burst=.. delay=..`). Concurrency policies
 * decide now and are left as they are; any other algorithm cannot reserve exactly, and throws.
 */
export function withDelays(
  policies: readonly NamedPolicy[],
  options: DelayOptions,
  several: boolean,
): readonly NamedPolicy[] {
  const { maxDelay, delayAfter } = options
  const maxDelayMs = maxDelay === undefined ? 0 : parseWait(maxDelay, 'maxDelay', 'no waiting')
  if (delayAfter !== undefined && (typeof delayAfter !== 'number' || Number.isNaN(delayAfter)))
    throw new LimiterTypeError('delayAfter', delayAfter, 'a positive integer')
  if (delayAfter !== undefined && (!Number.isInteger(delayAfter) || delayAfter < 1))
    throw new LimiterRangeError('delayAfter', delayAfter, 'must be a positive integer')
  if (maxDelayMs === 0 && delayAfter === undefined) return policies
  const option = maxDelayMs > 0 ? 'maxDelay' : 'delayAfter'
  const value = maxDelayMs > 0 ? maxDelay : delayAfter
  let reserving = 0
  const out = policies.map((policy, i) => {
    if (policy.algorithm === 'concurrency') return policy
    const algorithmOption = several ? `limits[${i}].algorithm` : 'algorithm'
    if (!RESERVING.has(policy.algorithm))
      throw new LimiterRangeError(
        option,
        value,
        `cannot be combined with ${algorithmOption} '${policy.algorithm}', which cannot reserve a later slot exactly: use 'gcra', 'token-bucket' or 'leaky-bucket' to delay requests instead of refusing them`,
      )
    reserving++
    const after = (delayAfter as number | undefined) ?? policy.burst
    if (after > policy.burst)
      throw new LimiterRangeError(
        'delayAfter',
        delayAfter,
        `must be at most the burst of every policy that delays (${several ? `limits[${i}].burst` : 'burst'} is ${policy.burst})`,
      )
    const waitUnits =
      maxDelayMs > 0 ? maxDelayMs * policy.limit : (policy.burst - after) * policy.windowMs
    if (waitUnits > MAX_UNITS)
      throw new LimiterRangeError(
        'maxDelay',
        maxDelay,
        `x limit must be at most 2^50 (${several ? `limits[${i}].limit` : 'limit'} is ${policy.limit})`,
      )
    return Object.freeze({ ...policy, delayAfter: after, waitUnits })
  })
  if (reserving === 0)
    throw new LimiterRangeError(
      option,
      value,
      "needs a 'gcra', 'token-bucket' or 'leaky-bucket' policy to reserve a slot in; a 'concurrency' limit cannot know when a slot frees: use `limiter.acquire(key, { maxWait })` to wait for one",
    )
  return out
}
