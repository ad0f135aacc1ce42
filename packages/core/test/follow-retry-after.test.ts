// The default policy honours its rate: a client that sends, and on a refusal waits exactly the
// Retry-After it was given, is admitted at least 99% of `limit` per `window` over 10 windows, and
// no refusal of a cost of 1 asks it to wait longer than a window. On an injected clock, through
// the public API, in memory and on Redis.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { retryAfterSeconds } from '../src/http/index.js'
import { createLimiter, type Limiter, MemoryStore, RedisStore, type Store } from '../src/index.js'
import { withClock } from '../src/testing/index.js'
import { useRedis } from './setup/redis.js'

const redis = useRedis()
const WINDOWS = 10
const EPOCH = 1_800_000_000_000

interface Run {
  readonly limit: number
  readonly windowMs: number
  /** Where in the (epoch-aligned) windows the client starts. */
  readonly phase: number
  /** Waits the header's whole seconds (at least 1) instead of the exact `retryAfterMs`. */
  readonly header: boolean
}

/** The client's admissions over 10 windows, the longest wait it was told, the latest reset. */
async function follow(store: Store, prefix: string, run: Run) {
  const start = EPOCH + (run.phase % run.windowMs)
  let now = start
  const limiter: Limiter = createLimiter(
    withClock({ limit: run.limit, window: run.windowMs, store, prefix }, () => now),
  )
  const end = start + WINDOWS * run.windowMs
  let admitted = 0
  let longestWaitMs = 0
  let latestResetMs = 0
  // bounded, so a limiter that admits everything fails instead of looping
  while (now < end && admitted <= 2 * WINDOWS * run.limit + 1) {
    const decision = await limiter.consume('client')
    latestResetMs = Math.max(latestResetMs, decision.resetMs)
    if (decision.allowed) {
      admitted++
      continue
    }
    const waitMs = run.header ? retryAfterSeconds(decision) * 1000 : decision.retryAfterMs
    longestWaitMs = Math.max(longestWaitMs, waitMs)
    now += Math.max(1, waitMs)
  }
  return { admitted, longestWaitMs, latestResetMs }
}

// Exact waits: any window in ms. The header's whole seconds: windows of whole seconds (a header
// cannot say less than 1 s, nor a fraction of one).
const runArb = (maxLimit: number) =>
  fc.oneof(
    fc.record({
      limit: fc.integer({ min: 1, max: maxLimit }),
      windowMs: fc.integer({ min: 1, max: 3_600_000 }),
      phase: fc.nat(),
      header: fc.constant(false),
    }),
    fc.record({
      limit: fc.integer({ min: 1, max: maxLimit }),
      windowMs: fc.integer({ min: 1, max: 3600 }).map((s) => s * 1000),
      phase: fc.nat(),
      header: fc.constant(true),
    }),
  )

// The limits the issue names, at 1 minute, both ways.
const EXAMPLES: [Run][] = [1, 2, 10, 100, 1000].flatMap((limit) =>
  [false, true].map((header): [Run] => [{ limit, windowMs: 60_000, phase: 12_345, header }]),
)

async function honoured(store: Store, prefix: string, run: Run): Promise<void> {
  const { admitted, longestWaitMs, latestResetMs } = await follow(store, prefix, run)
  expect(admitted, `admitted of ${WINDOWS} x ${run.limit}`).toBeGreaterThanOrEqual(
    0.99 * WINDOWS * run.limit,
  )
  expect(admitted).toBeLessThanOrEqual(WINDOWS * run.limit + run.limit)
  expect(longestWaitMs, 'the longest Retry-After').toBeLessThanOrEqual(run.windowMs)
  // the draft-10 `t`: never further than a window
  expect(latestResetMs, 'the latest reset').toBeLessThanOrEqual(run.windowMs)
}

describe('the default algorithm', () => {
  it('is gcra with burst = limit, for createLimiter and for `limits`', () => {
    const limiter = createLimiter({ limit: 5, window: '1m' })
    expect(limiter.policy).toEqual({ algorithm: 'gcra', limit: 5, windowMs: 60_000, burst: 5 })
    expect(limiter.name).toBe('gc5/1m')
    const several = createLimiter({
      limits: [
        { limit: 5, window: '1s' },
        { limit: 100, window: '1h' },
      ],
    })
    expect(several.policies.map((p) => [p.algorithm, p.burst])).toEqual([
      ['gcra', 5],
      ['gcra', 100],
    ])
  })

  it('admits a client that follows Retry-After at least 99% of limit per window (memory)', async () => {
    const store = new MemoryStore()
    let n = 0
    try {
      await fc.assert(
        fc.asyncProperty(runArb(1000), (run) => honoured(store, `m${n++}:`, run)),
        { numRuns: 200, examples: EXAMPLES },
      )
    } finally {
      await store.close()
    }
  }, 120_000)

  it('admits a client that follows Retry-After at least 99% of limit per window (Redis)', async () => {
    const store = new RedisStore({ client: redis.client })
    let n = 0
    await fc.assert(
      fc.asyncProperty(runArb(1000), (run) => honoured(store, `r${n++}:`, run)),
      { numRuns: 20, examples: EXAMPLES.filter(([run]) => run.limit <= 100) },
    )
  }, 120_000)
})
