// token-bucket: capacity `burst`, refilled at `limit` per window, starts full; decided with GCRA's state.
import { type GcraState, gcra } from './gcra.js'
import type { AlgorithmTwin } from './outcome.js'

/**
 * Token bucket: holds up to `burst` tokens, gains `limit` per window, and a request of cost `c`
 * takes `c` tokens if it has them. With tokens = `burst - (TAT - now) x limit / window`, that is
 * exactly GCRA's decision for the same numbers (allowed, remaining, reset, Retry-After; a
 * property test checks it against an independent bucket model), so the state is GCRA's one
 * theoretical arrival time and the Redis script is `gcra.lua`.
 */
export const tokenBucket: AlgorithmTwin<GcraState> = gcra
