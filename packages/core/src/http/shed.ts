// The adapters' `shed` option: a process shedder consulted before the limiter counts anything.
import type { Decision } from '../decision/decision.js'
import { doneOptionsOf, IGNORE } from '../shed/done-options.js'
import type { ShedAdmitted, ShedRefused } from '../shed/types.js'
import { isThenable, type MaybePromise } from './callbacks.js'
import { retryAfterSeconds } from './headers.js'
import type { LimitSet } from './limit-sets.js'
import type { RateLimitCheck } from './types.js'

/** The check of a request the shedder refused: nothing counted, 503 with `Retry-After`. */
export function shedCheck(set: LimitSet, key: string, refused: ShedRefused): RateLimitCheck {
  const retryAfterMs = Math.max(1, refused.retryAfterMs)
  const decision: Decision = Object.freeze({
    allowed: false,
    limit: set.limiter.policy.limit,
    remaining: 0,
    resetMs: 0,
    retryAfterMs,
    delayMs: 0,
    source: 'local',
    policies: Object.freeze([]),
    reason: 'shed',
  })
  return {
    decision,
    limiter: set.limiter,
    leases: false,
    key,
    cost: 0,
    policy: set.headerPolicy,
    headers: [['Retry-After', String(retryAfterSeconds(decision))]],
    shadow: false,
  }
}

/**
 * The limiter's check of a request the shedder admitted, carrying the admission's `done` as
 * `over` (called once the request is over) when the request goes on; a refused or failed check
 * ends the admission at once, ignored: its round trip (a few µs for a 429) measures no service
 * time, and would pull an adaptive limit up while the service queues.
 */
export function withAdmission(
  admission: ShedAdmitted,
  check: () => MaybePromise<RateLimitCheck>,
): MaybePromise<RateLimitCheck> {
  let result: MaybePromise<RateLimitCheck>
  try {
    result = check()
  } catch (error) {
    admission.done(IGNORE)
    throw error
  }
  if (!isThenable(result)) return admitted(admission, result)
  return Promise.resolve(result).then(
    (c) => admitted(admission, c),
    (error: unknown) => {
      admission.done(IGNORE)
      throw error
    },
  )
}

function admitted(admission: ShedAdmitted, check: RateLimitCheck): RateLimitCheck {
  // a refusal is answered at once: the request is over (a shadow limiter's goes on)
  if (!check.decision.allowed && !check.shadow) {
    admission.done(IGNORE)
    return check
  }
  // it goes on to the handler: its round trip is a sample, unless the response's final status,
  // when the host passes it, says a limiter further on refused it (429, 503), or it never ran;
  // a `maxDelay` wait is the limiter's, not the service's: it comes off the sample
  const waitedMs = check.decision.delayMs
  const over = (status?: number, ran = true): void =>
    admission.done(ran ? doneOptionsOf(status, waitedMs) : IGNORE)
  return { ...check, over }
}
