// The twin of each algorithm by name.
import type { Algorithm } from '../policy.js'
import { fixedWindow } from './fixed-window.js'
import { gcra } from './gcra.js'
import type { AlgorithmTwin } from './outcome.js'
import { slidingLog } from './sliding-log.js'
import { slidingWindow } from './sliding-window.js'

/**
 * Each algorithm's TypeScript twin, keyed by its name.
 *
 * A token bucket of `burst` tokens refilled at `limit` per window and a leaky bucket (meter) of
 * `burst` draining at `limit` per window make exactly GCRA's decisions for the same numbers:
 * tokens = burst - level = burst - (TAT - now) x limit / window. A property test checks it. So
 * all three keep GCRA's state (one theoretical arrival time) and run its code and script; the
 * names stay for how you think about the policy.
 */
export const TWINS: Readonly<Record<Algorithm, AlgorithmTwin<unknown>>> = Object.freeze({
  'fixed-window': fixedWindow as AlgorithmTwin<unknown>,
  'sliding-window': slidingWindow as AlgorithmTwin<unknown>,
  'sliding-log': slidingLog as AlgorithmTwin<unknown>,
  'token-bucket': gcra as AlgorithmTwin<unknown>,
  'leaky-bucket': gcra as AlgorithmTwin<unknown>,
  gcra: gcra as AlgorithmTwin<unknown>,
})
