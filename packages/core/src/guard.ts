// The guard around every remote store call: a deadline and a circuit breaker.
import { monotonicMs, nowMs } from './clock.js'
import { LimiterError } from './errors.js'

interface Waiter {
  readonly key: string
  readonly deadlineMs: number
  settled: boolean
  readonly reject: (error: unknown) => void
}

/** Circuit breaker settings. */
export interface BreakerOptions {
  /** Consecutive failures that open the circuit (default 3). */
  readonly failureThreshold: number
  /** How long an open circuit answers without calling the store, in ms (default 1000). */
  readonly coolDownMs: number
}

/**
 * Runs store calls under a deadline, and skips the store while the circuit of the call's failure
 * domain (a Cluster node, say; `''` by default) is open.
 */
export interface Guard {
  run<T>(key: string, work: () => Promise<T>, domain?: string): Promise<T>
}

// The circuit of one failure domain; only domains with failures since their last success have one.
interface Circuit {
  failures: number
  openUntilMs: number
  probing: boolean
}

// More than a Cluster has slots: a store naming domains by slot never evicts a live circuit.
const MAX_CIRCUITS = 16_384

/**
 * Creates a guard. After `failureThreshold` consecutive failures in one failure domain its
 * circuit opens: that domain's calls fail at once with `ERR_LIMITER_CIRCUIT_OPEN` (so nothing
 * piles up behind a dead node) until `coolDownMs` has passed; then one call probes it, and its
 * success closes the circuit. Other domains' calls go through meanwhile.
 */
export function createGuard(timeoutMs: number, breaker: BreakerOptions): Guard {
  const circuits = new Map<string, Circuit>()

  const succeed = (domain: string): void => {
    // Runs on every decision: a healthy store has no circuits to look at.
    if (circuits.size !== 0) circuits.delete(domain)
  }
  const failed = (domain: string): void => {
    let circuit = circuits.get(domain)
    if (circuit === undefined) {
      // Evicting the oldest circuit only forgets its count: its domain is retried sooner.
      if (circuits.size >= MAX_CIRCUITS) circuits.delete(circuits.keys().next().value as string)
      circuit = { failures: 0, openUntilMs: 0, probing: false }
      circuits.set(domain, circuit)
    }
    circuit.probing = false
    circuit.failures++
    if (circuit.failures >= breaker.failureThreshold)
      circuit.openUntilMs = nowMs() + breaker.coolDownMs
  }

  // Every call has the same timeout, so deadlines arrive in call order: one FIFO queue and one
  // timer for its head replace a timer per call (which costs more than the rest of a decision).
  const waiting: Waiter[] = []
  let head = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  const expire = (): void => {
    timer = undefined
    const now = monotonicMs()
    while (head < waiting.length) {
      const waiter = waiting[head] as Waiter
      if (waiter.settled) {
        head++
        continue
      }
      if (waiter.deadlineMs > now) break
      head++
      waiter.settled = true
      waiter.reject(
        new LimiterError(
          'ERR_LIMITER_TIMEOUT',
          `Rate limit store did not answer within ${timeoutMs} ms (key ${JSON.stringify(waiter.key.slice(0, 60))})`,
        ),
      )
    }
    if (head > 1024 && head * 2 > waiting.length) {
      waiting.splice(0, head)
      head = 0
    }
    arm()
  }
  // Each event-loop turn runs timers before it reads sockets. After a stall longer than the
  // deadline (a GC pause, a busy CPU) the timer would fire first and expire calls whose replies
  // are already waiting to be read; expiring in the check phase, after the reads, spares them.
  const expireAfterIo = (): void => {
    setImmediate(expire)
  }
  const arm = (): void => {
    while (head < waiting.length && (waiting[head] as Waiter).settled) head++
    if (head === waiting.length) {
      waiting.length = 0
      head = 0
      return
    }
    if (timer === undefined) {
      timer = setTimeout(
        expireAfterIo,
        Math.max(1, (waiting[head] as Waiter).deadlineMs - monotonicMs()),
      )
      timer.unref?.()
    }
  }

  // The breaker's bookkeeping runs in the same callbacks that settle the call: no extra promise.
  const withDeadline = <T>(key: string, domain: string, work: () => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const waiter: Waiter = {
        key,
        deadlineMs: monotonicMs() + timeoutMs,
        settled: false,
        reject: (error) => {
          failed(domain)
          reject(error)
        },
      }
      waiting.push(waiter)
      if (timer === undefined) arm()
      let pending: Promise<T>
      try {
        pending = work()
      } catch (error) {
        pending = Promise.reject(error)
      }
      pending.then(
        (value) => {
          if (waiter.settled) return
          waiter.settled = true
          succeed(domain)
          resolve(value)
        },
        (error: unknown) => {
          if (waiter.settled) return
          waiter.settled = true
          waiter.reject(error)
        },
      )
    })

  return {
    run(key, work, domain = '') {
      const circuit = circuits.get(domain)
      if (circuit !== undefined && circuit.failures >= breaker.failureThreshold) {
        if (circuit.probing || nowMs() < circuit.openUntilMs) {
          return Promise.reject(
            new LimiterError(
              'ERR_LIMITER_CIRCUIT_OPEN',
              'Rate limit store skipped: circuit open after repeated failures',
            ),
          )
        }
        circuit.probing = true
      }
      return withDeadline(key, domain, work)
    },
  }
}
