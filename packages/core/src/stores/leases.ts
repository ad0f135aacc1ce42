// Lease ids: one per concurrency admission, unique across processes without coordination.
import { randomBytes } from 'node:crypto'
import { ceilingOf, type Policy } from '../policies/policy.js'

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

/**
 * What a concurrency consume sends as its ticket: its new lease (none for a peek), behind
 * `<ceiling>/` when the policy has a `reserve` that caps the request's class below `limit`
 * (lua/concurrency.lua reads it; the lease id never holds a `/`). `''` for nothing at all.
 */
export function reservedLease(policy: Policy, cost: number, rank: number | undefined): string {
  const lease = cost > 0 ? newLease(cost) : ''
  if (policy.ceilings === undefined) return lease
  const ceiling = ceilingOf(policy, rank)
  return ceiling < policy.limit ? `${ceiling}/${lease}` : lease
}

/**
 * What a waiting gcra consume (a limiter's `maxDelay` or `delayAfter`) sends as its ticket: the
 * most whole ms it may wait for its slot (`StoreCall.waitMs`), which narrows the policy's own
 * allowance for this request alone (lua/gcra.lua reads it). `''`: none given, or a policy that
 * does not wait.
 */
export function waitTicket(policy: Policy, waitMs: number | undefined): string {
  return waitMs === undefined || policy.waitUnits === undefined ? '' : String(waitMs)
}

/**
 * A consume's ticket under `policy`: a concurrency policy's new lease (see reservedLease), a
 * waiting gcra policy's wait cap (see waitTicket), else `''`.
 */
export function consumeTicket(
  policy: Policy,
  cost: number,
  rank: number | undefined,
  waitMs: number | undefined,
): string {
  if (policy.algorithm === 'concurrency') return reservedLease(policy, cost, rank)
  return waitTicket(policy, waitMs)
}
