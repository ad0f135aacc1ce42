// The guard around every remote store call: a deadline and a circuit breaker.
import { monotonicMs } from '../common/clock.js'
import { LimiterError } from '../common/errors.js'
import type { StoreSink as Sink, StoreCall } from '../stores/store.js'

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
  /**
   * Submits `call` through `handlers.submit` and resolves with `handlers.value` of the store's
   * answer, or `handlers.error` of its failure, the deadline or an open circuit. One promise per
   * call: the store settles the sink it is given, with no promise of its own in between.
   */
  run<T>(call: StoreCall, domain: string, sentAtMs: number, handlers: Handlers<T>): Promise<T>
  /** Whether `domain`'s circuit is open now (its calls skip the store). */
  isOpen(domain: string): boolean
}

/** Told when a failure domain's circuit opens, and when it closes again. */
export type CircuitListener = (domain: string, state: 'open' | 'closed') => void

/** What a guarded call does, fixed per limiter and kind of call (so nothing is built per call). */
export interface Handlers<T> {
  /** Hands `call` to the store, which settles `sink` (synchronous throws count as failures). */
  submit(call: StoreCall, sink: Sink): void
  /** The result for the store's answer. */
  value(call: StoreCall, value: unknown, sentAtMs: number): T
  /** The result for a consume's decision given as plain values (see `StoreSink.decided`). */
  decided?(
    call: StoreCall,
    allowed: boolean,
    remaining: number,
    resetMs: number,
    retryAfterMs: number,
    ticket: string | undefined,
    delayMs: number,
    sentAtMs: number,
  ): T
  /**
   * Sent even while the circuit is open (give-backs: refund, release, reset). Skipping them
   * would hold a lease, or a count, for its window after a blip that opened the circuit; they
   * still have the deadline, and their success closes the circuit.
   */
  readonly pastOpenCircuit?: boolean
  /** The result for a failure: the store's error, the deadline, or an open circuit. */
  error(call: StoreCall, error: unknown): T | PromiseLike<T>
  /**
   * Told the store's answer to a call already settled (its deadline passed first): what it
   * counted for a caller that was answered otherwise.
   */
  late?(call: StoreCall, value: unknown): void
}

// The circuit of one failure domain; only domains with failures since their last success have one.
interface Circuit {
  failures: number
  /** Monotonic ms (performance.now): a wall clock stepped back would hold the circuit open. */
  openUntilMs: number
  probing: boolean
}

// More than a Cluster has slots: a store naming domains by slot never evicts a live circuit.
const MAX_CIRCUITS = 16_384

interface Circuits {
  succeed(domain: string): void
  failed(domain: string): void
  /** A call settled: let the deadline queue drop what has settled at its head. */
  release(): void
}

// One call in flight: the store's sink, and the guard's entry in its deadline queue.
class Waiter<T> implements Sink {
  settled = false
  constructor(
    readonly circuits: Circuits,
    readonly call: StoreCall,
    readonly domain: string,
    readonly deadlineMs: number,
    readonly sentAtMs: number,
    readonly handlers: Handlers<T>,
    readonly done: (result: T | PromiseLike<T>) => void,
  ) {}

  resolve(value: unknown): void {
    if (!this.#claim(true)) {
      this.handlers.late?.(this.call, value)
      return
    }
    let result: T | PromiseLike<T>
    try {
      result = this.handlers.value(this.call, value, this.sentAtMs)
    } catch (error) {
      result = this.handlers.error(this.call, error)
    }
    this.done(result)
  }

  decided(
    allowed: boolean,
    remaining: number,
    resetMs: number,
    retryAfterMs: number,
    ticket: string | undefined,
    delayMs: number,
  ): void {
    const { handlers } = this
    // (a late answer, too, goes as a value: see resolve)
    if (handlers.decided === undefined || this.settled) {
      this.resolve({ allowed, remaining, resetMs, retryAfterMs, ticket, delayMs })
      return
    }
    if (!this.#claim(true)) return
    let result: T | PromiseLike<T>
    try {
      result = handlers.decided(
        this.call,
        allowed,
        remaining,
        resetMs,
        retryAfterMs,
        ticket,
        delayMs,
        this.sentAtMs,
      )
    } catch (error) {
      result = handlers.error(this.call, error)
    }
    this.done(result)
  }

  reject(error: unknown): void {
    if (!this.#claim(false)) return
    this.done(this.handlers.error(this.call, error))
  }

  // The first outcome settles the call and counts toward its domain's circuit; later ones (a
  // reply after the deadline, say) go to the handlers' `late`, or are dropped.
  #claim(succeeded: boolean): boolean {
    if (this.settled) return false
    this.settled = true
    if (succeeded) this.circuits.succeed(this.domain)
    else this.circuits.failed(this.domain)
    this.circuits.release()
    return true
  }
}

// The executor every guarded call's promise shares: it leaves the promise's resolve here, for
// the caller to take at once (executors run synchronously inside the Promise constructor).
let captured: ((result: never) => void) | undefined
function capture(resolve: (result: never) => void): void {
  captured = resolve
}

// The circuits of a guard: one per failure domain with failures since its last success.
function createCircuits(breaker: BreakerOptions, listener: CircuitListener | undefined) {
  const circuits = new Map<string, Circuit>()
  const { failureThreshold } = breaker
  // Forgets a domain's circuit; one that was open is closed from now on.
  const drop = (domain: string): void => {
    const circuit = circuits.get(domain)
    if (circuit === undefined) return
    circuits.delete(domain)
    if (circuit.failures >= failureThreshold) listener?.(domain, 'closed')
  }
  return {
    succeed(domain: string): void {
      // Runs on every decision: a healthy store has no circuits to look at.
      if (circuits.size !== 0) drop(domain)
    },
    failed(domain: string): void {
      let circuit = circuits.get(domain)
      if (circuit === undefined) {
        // Evicting the oldest circuit only forgets its count: its domain is retried sooner.
        if (circuits.size >= MAX_CIRCUITS) drop(circuits.keys().next().value as string)
        circuit = { failures: 0, openUntilMs: 0, probing: false }
        circuits.set(domain, circuit)
      }
      circuit.probing = false
      circuit.failures++
      if (circuit.failures >= failureThreshold) {
        circuit.openUntilMs = monotonicMs() + breaker.coolDownMs
        // a failed probe keeps it open: only the first failure past the threshold opens it
        if (circuit.failures === failureThreshold) listener?.(domain, 'open')
      }
    },
    isOpen(domain: string): boolean {
      const circuit = circuits.get(domain)
      return circuit !== undefined && circuit.failures >= failureThreshold
    },
    /** Whether a call to `domain` may go to the store now (an open circuit lets one probe in). */
    admits(domain: string): boolean {
      const circuit = circuits.get(domain)
      if (circuit === undefined || circuit.failures < failureThreshold) return true
      if (circuit.probing || monotonicMs() < circuit.openUntilMs) return false
      circuit.probing = true
      return true
    },
  }
}

// What a call that got no answer within `timeoutMs` rejects with.
function timeoutError(call: StoreCall, timeoutMs: number): LimiterError {
  return new LimiterError(
    'ERR_LIMITER_TIMEOUT',
    `Rate limit store did not answer within ${timeoutMs} ms (key ${JSON.stringify(call.key.slice(0, 60))})`,
  )
}

// The calls in flight, in deadline order, with one timer for the head of the queue.
function createDeadlines(timeoutMs: number) {
  // Every call has the same timeout, so deadlines arrive in call order: one FIFO queue and one
  // timer for its head replace a timer per call (which costs more than the rest of a decision).
  const waiting: Waiter<unknown>[] = []
  let head = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  // Calls mostly settle in the order they were made (a batch's replies come in order), so the
  // queue's settled head is dropped as it settles: the queue holds what is in flight, not every
  // call of the last `timeoutMs` (which kept hundreds of thousands of settled calls, with their
  // promises and decisions, alive until the timer fired: most of the GC work per decision).
  const release = (): void => {
    while (head < waiting.length && (waiting[head] as Waiter<unknown>).settled) head++
    if (head === waiting.length) {
      waiting.length = 0
      head = 0
    } else if (head > 1024 && head * 2 > waiting.length) {
      waiting.splice(0, head)
      head = 0
    }
  }
  const expire = (): void => {
    timer = undefined
    const now = monotonicMs()
    // The head is always unsettled (release keeps it so); a rejection releases it in turn.
    while (head < waiting.length) {
      const waiter = waiting[head] as Waiter<unknown>
      if (waiter.deadlineMs > now) break
      head++
      waiter.reject(timeoutError(waiter.call, timeoutMs))
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
    release()
    if (head === waiting.length) return
    if (timer === undefined) {
      timer = setTimeout(
        expireAfterIo,
        Math.max(1, (waiting[head] as Waiter<unknown>).deadlineMs - monotonicMs()),
      )
      timer.unref?.()
    }
  }
  return {
    release,
    push(waiter: Waiter<unknown>): void {
      waiting.push(waiter)
      if (timer === undefined) arm()
    },
  }
}

/**
 * Creates a guard. After `failureThreshold` consecutive failures in one failure domain its
 * circuit opens: that domain's calls fail at once with `ERR_LIMITER_CIRCUIT_OPEN` (so nothing
 * piles up behind a dead node) until `coolDownMs` has passed; then one call probes it, and its
 * success closes the circuit. Other domains' calls go through meanwhile.
 */
export function createGuard(
  timeoutMs: number,
  breaker: BreakerOptions,
  listener?: CircuitListener,
): Guard {
  const circuits = createCircuits(breaker, listener)
  const deadlines = createDeadlines(timeoutMs)
  const circuitState: Circuits = {
    succeed: circuits.succeed,
    failed: circuits.failed,
    release: deadlines.release,
  }
  return {
    isOpen: circuits.isOpen,
    run<T>(call: StoreCall, domain: string, sentAtMs: number, handlers: Handlers<T>): Promise<T> {
      if (handlers.pastOpenCircuit !== true && !circuits.admits(domain)) {
        return Promise.resolve(
          handlers.error(
            call,
            new LimiterError(
              'ERR_LIMITER_CIRCUIT_OPEN',
              'Rate limit store skipped: circuit open after repeated failures',
            ),
          ),
        )
      }
      // A shared executor hands over the promise's resolve: no closure per call.
      const promise = new Promise<T>(capture)
      const waiter = new Waiter(
        circuitState,
        call,
        domain,
        monotonicMs() + timeoutMs,
        sentAtMs,
        handlers,
        captured as (result: T | PromiseLike<T>) => void,
      )
      deadlines.push(waiter as Waiter<unknown>)
      try {
        handlers.submit(call, waiter)
      } catch (error) {
        waiter.reject(error)
      }
      return promise
    },
  }
}
