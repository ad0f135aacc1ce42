// What limiters still owe their stores: releases and refunds in flight, which `limiter.close()`
// and `closeLimiters()` wait for (a shutdown must not quit the client under them).

/** The give-backs in flight of every limiter of this process. */
const ALL = new Set<Promise<void>>()

const ignore = (): void => {}

/** One limiter's give-backs in flight. */
export interface Owed {
  /** Holds `promise` until it settles; returns it as it is. */
  track<T>(promise: Promise<T>): Promise<T>
  /** Resolves once every give-back tracked (before or meanwhile) has settled. */
  settled(): Promise<void>
}

async function drain(pending: Set<Promise<void>>): Promise<void> {
  // one started while waiting (a release's waiter taking and giving back a slot) is waited for too
  while (pending.size > 0) await Promise.all([...pending])
}

/** A limiter's record of what it owes. */
export function owedOf(): Owed {
  const own = new Set<Promise<void>>()
  return {
    track(promise) {
      const done = promise.then(ignore, ignore)
      own.add(done)
      ALL.add(done)
      void done.then(() => {
        own.delete(done)
        ALL.delete(done)
      })
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
