// Waiting for a slot (limiter.acquire and limiter.run), for outbound calls and jobs.
import type { Decision } from './decision.js'
import { MAX_TIMER_MS, parseDuration } from './duration.js'
import { LimiterError, LimiterTypeError } from './errors.js'
import type { AcquireOptions, Limiter } from './limiter-types.js'
import { refusedByConcurrency } from './limits.js'
import { own } from './option-names.js'

// A concurrency refusal is polled again after FIRST_POLL_MS, doubling up to MAX_POLL_MS (a
// release in this process wakes its waiters at once; one in another process is seen next poll).
const FIRST_POLL_MS = 5
const MAX_POLL_MS = 250

/** The waiters of one limiter, by key: `release` wakes those of its key. */
export class Wakers {
  readonly #waiting = new Map<string, Set<() => void>>()

  /** Calls `wake` at the next {@link Wakers.wake} of `key`; returns how to stop waiting. */
  add(key: string, wake: () => void): () => void {
    let set = this.#waiting.get(key)
    if (set === undefined) {
      set = new Set()
      this.#waiting.set(key, set)
    }
    set.add(wake)
    return () => {
      set.delete(wake)
      if (set.size === 0 && this.#waiting.get(key) === set) this.#waiting.delete(key)
    }
  }

  wake(key: string): void {
    const set = this.#waiting.get(key)
    if (set === undefined) return
    this.#waiting.delete(key)
    for (const wake of set) wake()
  }
}

interface Parsed {
  readonly cost: number
  readonly maxWaitMs: number
  readonly signal: AbortSignal | undefined
}

function parse(options: AcquireOptions | undefined, waitMs: number): Parsed {
  if (options === undefined) return { cost: 1, maxWaitMs: waitMs, signal: undefined }
  if (options === null || typeof options !== 'object')
    throw new LimiterTypeError('options', options, 'an object { cost?, maxWait?, signal? }')
  const maxWait = own(options, 'maxWait')
  const signal = own(options, 'signal')
  if (signal !== undefined && !(signal instanceof AbortSignal))
    throw new LimiterTypeError('signal', signal, 'an AbortSignal')
  return {
    cost: (own(options, 'cost') ?? 1) as number,
    maxWaitMs:
      maxWait === undefined
        ? waitMs
        : maxWait === 0
          ? 0
          : parseDuration(maxWait, 'maxWait', MAX_TIMER_MS),
    signal,
  }
}

// Resolves after `ms`, or when woken; rejects with the signal's reason once it aborts.
function pause(
  ms: number,
  signal: AbortSignal | undefined,
  woken?: (wake: () => void) => () => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let stop: (() => void) | undefined
    const done = (): void => {
      clearTimeout(timer)
      stop?.()
      signal?.removeEventListener('abort', aborted)
    }
    const timer = setTimeout(() => {
      done()
      resolve()
    }, ms)
    const aborted = (): void => {
      done()
      reject(signal?.reason)
    }
    signal?.addEventListener('abort', aborted, { once: true })
    stop = woken?.(() => {
      done()
      resolve()
    })
  })
}

function refused(decision: Decision, key: string, maxWaitMs: number): LimiterError {
  return new LimiterError(
    'ERR_LIMITER_REFUSED',
    `no slot for key ${JSON.stringify(key)} within maxWait (${maxWaitMs} ms); retry in ${decision.retryAfterMs} ms`,
    { decision },
  )
}

// An admission whose wait is longer than the caller's, as the refusal it is for that caller:
// Retry-After is when it would pass without waiting.
function tooLate(decision: Decision): Decision {
  const { limit, resetMs, source, policies } = decision
  return Object.freeze({
    allowed: false,
    limit,
    remaining: 0,
    resetMs,
    retryAfterMs: decision.delayMs,
    delayMs: 0,
    source,
    policies,
  })
}

/**
 * `limiter.acquire`: consumes until admitted within `maxWait` (default `waitMs`, the limiter's
 * wait allowance: `maxDelay`, or with `delayAfter` alone the wait until its burst is used up). A
 * rate refusal sleeps until its slot can be reserved (its Retry-After, less `waitMs`), a concurrency one
 * polls with backoff or until a release in this process wakes it; an admission with `delayMs`
 * waits it out. Aborting gives a reservation back.
 */
export async function acquire(
  limiter: Limiter,
  wakers: Wakers,
  waitMs: number,
  key: string,
  options: AcquireOptions | undefined,
  shadow = false,
): Promise<Decision> {
  const { cost, maxWaitMs, signal } = parse(options, waitMs)
  signal?.throwIfAborted()
  // a shadow limiter observes: its decision is made and counted, and the caller goes at once
  if (shadow) return limiter.consume(key, cost)
  const deadline = performance.now() + maxWaitMs
  let pollMs = FIRST_POLL_MS
  for (;;) {
    // the slot's wait counts from the ask (the reply's latency is not the caller's wait), in
    // whole ms as delayMs is
    const askedAt = performance.now()
    const decision = await limiter.consume(key, cost)
    if (
      decision.allowed &&
      decision.delayMs > 0 &&
      decision.delayMs > Math.ceil(deadline - askedAt)
    ) {
      // reserved further ahead (the limiter's maxDelay) than this caller will wait
      await limiter.refund(key, cost, decision).catch(() => undefined)
      throw refused(tooLate(decision), key, maxWaitMs)
    }
    if (decision.allowed) {
      if (decision.delayMs === 0 && signal?.aborted !== true) return decision
      try {
        signal?.throwIfAborted()
        await pause(decision.delayMs, signal)
        return decision
      } catch (error) {
        await limiter.refund(key, cost, decision).catch(() => undefined)
        throw error
      }
    }
    const left = deadline - performance.now()
    const polled = refusedByConcurrency(limiter.policies, decision)
    const sleepMs = polled
      ? Math.min(pollMs, decision.retryAfterMs)
      : Math.max(1, decision.retryAfterMs - waitMs)
    // a rate policy that refuses for longer than is left (a block refuses them all) ends it
    // now, though a concurrency policy refused too: no release can help within maxWait
    const rateMs = polled ? rateWaitMs(limiter, decision) - waitMs : sleepMs
    if (left <= 0 || rateMs > left) throw refused(decision, key, maxWaitMs)
    await pause(
      Math.min(sleepMs, Math.max(1, Math.ceil(left))),
      signal,
      polled ? (wake) => wakers.add(key, wake) : undefined,
    )
    pollMs = Math.min(MAX_POLL_MS, pollMs * 2)
  }
}

// The longest Retry-After among the rate policies that refused (0: none did).
function rateWaitMs(limiter: Limiter, decision: Decision): number {
  let most = 0
  decision.policies.forEach((p, i) => {
    const rate = limiter.policies[i]?.algorithm !== 'concurrency'
    if (rate && !p.allowed && p.retryAfterMs > most) most = p.retryAfterMs
  })
  return most
}

/** `limiter.run`: `fn` inside a slot, always released. */
export async function runInSlot<T>(
  limiter: Limiter,
  key: string,
  fn: (decision: Decision) => T | PromiseLike<T>,
  options: AcquireOptions | undefined,
): Promise<T> {
  if (typeof fn !== 'function') throw new LimiterTypeError('fn', fn, 'a function')
  const decision = await limiter.acquire(key, options)
  try {
    return await fn(decision)
  } finally {
    await limiter.release(key, decision)
  }
}
