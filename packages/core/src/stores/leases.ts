// Lease ids: one per concurrency admission, unique across processes without coordination.
import { randomBytes } from 'node:crypto'

// 72 random bits per process: two processes share a prefix with odds of about 2^-72 per pair.
const PROCESS = randomBytes(9).toString('base64url')
let counter = 0

/**
 * A new lease of `cost` slots, as `<cost>:<id>` (the ticket its release passes back). The id is
 * this process's random prefix and a counter: two admissions in one millisecond, or in two
 * processes, never share one.
 */
export function newLease(cost: number): string {
  counter++
  return `${cost}:${PROCESS}${counter.toString(36)}`
}
