// consume's and peek's options, read once per call that gives them: the priority rank and the
// call's own wait cap.
import { parseWait } from '../common/duration.js'
import { LimiterTypeError } from '../common/errors.js'
import { own } from '../common/option-names.js'
import { priorityRank } from '../shed/priority.js'
import type { ConsumeOptions, Decide } from './types.js'

/**
 * `decide` for a call that gave `options`: its priority's rank (`undefined`: normal) and its
 * `maxDelay` in whole ms (`undefined`: the limiter's own). Bad options throw, naming the option.
 */
export function decideWith(
  decide: Decide,
  key: string,
  cost: number,
  options: ConsumeOptions,
): ReturnType<Decide> {
  if (options === null || typeof options !== 'object')
    throw new LimiterTypeError(
      'options',
      options,
      'an object such as { priority: "high" } or { maxDelay: "200ms" }',
    )
  const priority = own(options, 'priority') as ConsumeOptions['priority']
  const maxDelay = own(options, 'maxDelay')
  return decide(
    key,
    cost,
    priority === undefined ? undefined : priorityRank(priority),
    maxDelay === undefined ? undefined : parseWait(maxDelay, 'maxDelay'),
  )
}
