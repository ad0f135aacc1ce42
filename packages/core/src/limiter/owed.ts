// What limiters still owe their stores: releases and refunds in flight, which `limiter.close()`
// and `closeLimiters()` wait for (a shutdown must not quit the client under them).

// A count of give-backs in flight, and who waits for it to come back to 0. A count, not a set of
// promises: tracking costs a release one promise reaction and two increments, nothing more.
interface InFlight {
  n: number
  waiting: Array<() => void>
}

/** The give-backs in flight of every limiter of this process. */
const ALL: InFlight = { n: 0, waiting: [] }

function ended(count: InFlight): void {
  count.n--
  if (count.n > 0 || count.waiting.length === 0) return
  const waiting = count.waiting
  count.waiting = []
  for (const wake of waiting) wake()
}

async function drain(count: InFlight): Promise<void> {
  // one started while waiting (a release's waiter taking and giving back a slot) is waited for too
  while (count.n > 0) await new Promise<void>((resolve) => count.waiting.push(resolve))
}

/** One limiter's give-backs in flight. */
export interface Owed {
  /** Holds `promise` until it settles; returns it as it is. */
  track<T>(promise: Promise<T>): Promise<T>
  /** Resolves once every give-back tracked (before or meanwhile) has settled. */
  settled(): Promise<void>
}

/** A limiter's record of what it owes. */
export function owedOf(): Owed {
  const own: InFlight = { n: 0, waiting: [] }
  const settle = (): void => {
    ended(own)
    ended(ALL)
  }
  return {
    track(promise) {
      own.n++
      ALL.n++
      promise.then(settle, settle)
      return promise
    },
    settled: () => drain(own),
  }
}

/**
 * Resolves once the releases and refunds in flight of every limiter of this process (the ones
 * the adapters' `rateLimit()` build included) have settled: await it when the app shuts down,
 * after the server stopped taking requests and before you quit the Redis client. It closes
 * nothing: the limiters keep working, and your client stays open.
 *
 * @example
 * server.close(async () => {
 *   await closeLimiters()
 *   await redis.quit()
 * })
 */
export function closeLimiters(): Promise<void> {
  return drain(ALL)
}
