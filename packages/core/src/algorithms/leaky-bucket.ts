// leaky-bucket: the meter form (a level draining at `limit` per window, at most `burst`); GCRA's state.
import { type GcraState, gcra } from './gcra.js'
import type { AlgorithmTwin } from './outcome.js'

/**
 * Leaky bucket as a meter (policing): the level drains at `limit` per window, holds at most
 * `burst`, and a request that would overflow it is rejected. With level = `(TAT - now) x limit /
 * window`, that is exactly GCRA's decision for the same numbers (a property test checks it
 * against an independent bucket model), so the state is GCRA's theoretical arrival time and the
 * Redis script is `gcra.lua`.
 */
export const leakyBucket: AlgorithmTwin<GcraState> = gcra
