// The twin of each algorithm by name.
import type { Algorithm } from '../policies/policy.js'
import { concurrency } from './concurrency.js'
import { fixedWindow } from './fixed-window.js'
import { gcra } from './gcra.js'
import { leakyBucket } from './leaky-bucket.js'
import type { AlgorithmTwin } from './outcome.js'
import { slidingLog } from './sliding-log.js'
import { slidingWindow } from './sliding-window.js'
import { tokenBucket } from './token-bucket.js'

/**
 * Each algorithm's TypeScript twin, keyed by its name. `token-bucket` and `leaky-bucket` are
 * GCRA's twin under their own names: they make exactly its decisions (see their modules).
 */
export const TWINS: Readonly<Record<Algorithm, AlgorithmTwin<unknown>>> = Object.freeze({
  'fixed-window': fixedWindow as AlgorithmTwin<unknown>,
  'sliding-window': slidingWindow as AlgorithmTwin<unknown>,
  'sliding-log': slidingLog as AlgorithmTwin<unknown>,
  'token-bucket': tokenBucket as AlgorithmTwin<unknown>,
  'leaky-bucket': leakyBucket as AlgorithmTwin<unknown>,
  gcra: gcra as AlgorithmTwin<unknown>,
  concurrency: concurrency as AlgorithmTwin<unknown>,
})
