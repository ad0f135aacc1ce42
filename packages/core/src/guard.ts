// The guard around every remote store call: a deadline and a circuit breaker.
import { nowMs } from './clock.js'
import { LimiterError } from './errors.js'

/** Circuit breaker settings. */
export interface BreakerOptions {
  /** Consecutive failures that open the circuit (default 3). */
  readonly failureThreshold: number
  /** How long an open circuit answers without calling the store, in ms (default 1000). */
  readonly coolDownMs: number
}

/** Runs store calls under a deadline, and skips the store while its circuit is open. */
export interface Guard {
  run<T>(key: string, work: () => Promise<T>): Promise<T>
  /** `'closed'` (calls go through), `'open'` (calls are skipped) or `'half-open'` (one probe in flight). */
  readonly state: 'closed' | 'open' | 'half-open'
}

/**
 * Creates a guard. After `failureThreshold` consecutive failures the circuit opens: calls fail
 * at once with `ERR_LIMITER_CIRCUIT_OPEN` (so nothing piles up behind a dead store) until
 * `coolDownMs` has passed; then one call probes the store, and its success closes the circuit.
 */
export function createGuard(timeoutMs: number, breaker: BreakerOptions): Guard {
  let failures = 0
  let openUntilMs = 0
  let probing = false

  const succeed = (): void => {
    failures = 0
    probing = false
  }
  const failed = (): void => {
    probing = false
    failures++
    if (failures >= breaker.failureThreshold) openUntilMs = nowMs() + breaker.coolDownMs
  }

  const withDeadline = <T>(key: string, work: () => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(
          new LimiterError(
            'ERR_LIMITER_TIMEOUT',
            `Rate limit store did not answer within ${timeoutMs} ms (key ${JSON.stringify(key.slice(0, 60))})`,
          ),
        )
      }, timeoutMs)
      let pending: Promise<T>
      try {
        pending = work()
      } catch (error) {
        pending = Promise.reject(error)
      }
      pending.then(
        (value) => {
          clearTimeout(timer)
          resolve(value)
        },
        (error: unknown) => {
          clearTimeout(timer)
          reject(error)
        },
      )
    })

  return {
    get state() {
      if (failures < breaker.failureThreshold) return 'closed'
      return probing ? 'half-open' : 'open'
    },
    run(key, work) {
      if (failures >= breaker.failureThreshold && (probing || nowMs() < openUntilMs)) {
        return Promise.reject(
          new LimiterError(
            'ERR_LIMITER_CIRCUIT_OPEN',
            'Rate limit store skipped: circuit open after repeated failures',
          ),
        )
      }
      if (failures >= breaker.failureThreshold) probing = true
      const result = withDeadline(key, work)
      result.then(succeed, failed)
      return result
    },
  }
}
