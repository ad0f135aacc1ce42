// Drives one limiter through a traffic shape on an injected clock and records what it admitted.

/** Where the simulated clock starts: a multiple of every window, so windows align with 0 s. */
export const EPOCH_MS = 1_700_000_000_000

/**
 * Sends `shape.sent` through a fresh limiter with `policy` on its own MemoryStore, one request at
 * a time on an injected clock. `api`: `createLimiter` and `MemoryStore` from `@limiter/core`,
 * `withClock` from `@limiter/core/testing` (the built package, or its sources in a test).
 * Returns the admitted request times (ms from 0).
 */
export async function admittedTimes(api, policy, shape) {
  const store = new api.MemoryStore()
  let now = EPOCH_MS
  const limiter = api.createLimiter(api.withClock({ ...policy, store }, () => now))
  const admitted = []
  try {
    for (const t of shape.sent) {
      now = EPOCH_MS + t
      const decision = await limiter.consume('client')
      if (decision.allowed) admitted.push(t)
    }
  } finally {
    await store.close()
  }
  return admitted
}

/** How many of `times` (ascending ms) fall in each `binMs` bin of [0, lengthMs). */
export function perBin(times, binMs, lengthMs) {
  const bins = new Array(Math.ceil(lengthMs / binMs)).fill(0)
  for (const t of times) bins[Math.floor(t / binMs)] += 1
  return bins
}

/**
 * "Admitted in the last `windowMs`" as a step function: [time, count] at each change, where the
 * count at time x is the admissions in (x - windowMs, x], as sliding-log counts them.
 */
export function inWindow(times, windowMs, lengthMs) {
  const changes = new Map()
  for (const t of times) {
    changes.set(t, (changes.get(t) ?? 0) + 1)
    changes.set(t + windowMs, (changes.get(t + windowMs) ?? 0) - 1)
  }
  const steps = [[0, 0]]
  let count = 0
  for (const t of [...changes.keys()].sort((a, b) => a - b)) {
    if (t >= lengthMs) break
    count += changes.get(t)
    steps.push([t, count])
  }
  return steps
}

/** The most admissions in any `windowMs`-long interval (the step function's peak). */
export function mostInWindow(steps) {
  return steps.reduce((most, [, count]) => Math.max(most, count), 0)
}
