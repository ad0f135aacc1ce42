// The default deadline, checked by measurement: a healthy private Redis answers bursts of 2,000
// concurrent decisions well within it. Prints the worst latency seen, with and without batching.
// Two claims, kept apart so that load can explain only the one about time:
// - counts: every decision comes from Redis and a hot key admits exactly its limit. These run
//   with a deadline no busy machine reaches, so a wrong count is a bug, never load (with the
//   500 ms default, a deadline that fired on a loaded machine answered 'open': extra admissions);
// - latency: the slowest decision stays under the default deadline on an idle machine; on a busy
//   one the bound is the default scaled by the measured event-loop delay (test-support/load.ts).
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { describe, expect, it } from 'vitest'
import { watchLoad } from '../../../test-support/load.js'
import {
  ALGORITHMS,
  createLimiter,
  type Decision,
  failureOf,
  type LimiterError,
  RedisStore,
} from '../src/index.js'
import { useRedis } from './setup/redis.js'

const redis = useRedis()
const BURST = 2_000
const REPETITIONS = 3
const DEFAULT_TIMEOUT_MS = 500
/** The deadline of the counting runs: far above what a loaded machine shows. */
const COUNTING_TIMEOUT_MS = 30_000

const report: string[] = []

describe.each([
  ['batched (default)', undefined],
  ['batch: false', false as const],
])(`default timeout, ${BURST} concurrent decisions, %s`, (_label, batch) => {
  it.each(ALGORITHMS)(
    '%s: every decision comes from Redis, exact counts, latency within the default deadline',
    async (algorithm) => {
      const errors: LimiterError[] = []
      const store = new RedisStore({ client: redis.client, ...(batch === false ? { batch } : {}) })
      // Defaults apart from the hook and the deadline: failureMode 'open', circuit breaker.
      const limiter = createLimiter({
        algorithm,
        limit: 1_000,
        window: '1m',
        prefix: `burst-${batch === false ? 'single' : 'batched'}:`,
        store,
        timeout: COUNTING_TIMEOUT_MS,
        onError: (error) => errors.push(error),
      })
      // the load before the bursts: they block the loop themselves, and must not raise their bound
      const load = await watchLoad({ cap: 10, during: false })
      const lag = monitorEventLoopDelay({ resolution: 10 })
      lag.enable()
      let worstMs = 0
      let slowestBurstMs = 0
      for (let round = 0; round < REPETITIONS; round++) {
        for (const shape of ['distinct keys', 'one hot key'] as const) {
          const started = performance.now()
          const decisions = await Promise.all(
            Array.from({ length: BURST }, async (_, i): Promise<Decision> => {
              const d = await limiter.consume(
                shape === 'one hot key' ? `hot${round}` : `c${round}.${i}`,
              )
              worstMs = Math.max(worstMs, performance.now() - started)
              return d
            }),
          )
          slowestBurstMs = Math.max(slowestBurstMs, performance.now() - started)
          expect(decisions.filter((d) => failureOf(d) !== undefined)).toEqual([])
          if (shape === 'one hot key') {
            // The limit, plus what refilled during the burst (a timed-out call would admit more).
            const refilled = Math.ceil(((performance.now() - started) * 1_000) / 60_000)
            const allowed = decisions.filter((d) => d.allowed).length
            expect(allowed).toBeGreaterThanOrEqual(1_000)
            expect(allowed).toBeLessThanOrEqual(1_000 + refilled)
          }
        }
      }
      lag.disable()
      load.stop()
      report.push(
        `| ${_label} | ${algorithm} | ${Math.round(worstMs)} ms | ${Math.round(Math.max(0, lag.max / 1e6 - 10))} ms | ${load.p99Ms().toFixed(1)} ms |`,
      )
      expect(errors).toEqual([])
      // Idle: under the default deadline. Busy: that times the load factor (at most 10: a burst
      // that took seconds, say answered one call per round trip, still fails).
      const bound = load.budget(0, DEFAULT_TIMEOUT_MS)
      expect(worstMs, load.describe(0, DEFAULT_TIMEOUT_MS)).toBeLessThan(bound)
      expect(slowestBurstMs, load.describe(0, DEFAULT_TIMEOUT_MS)).toBeLessThan(bound)
    },
  )
})

describe('report', () => {
  it('prints the worst latencies', () => {
    console.log(
      [
        '',
        `Worst decision latency in bursts of ${BURST} concurrent decisions (x${REPETITIONS}, distinct keys and one hot key) on a private Redis; default timeout ${DEFAULT_TIMEOUT_MS} ms`,
        '| store | algorithm | worst latency | longest event-loop stall | event-loop delay p99 |',
        '|---|---|---|---|---|',
        ...report,
      ].join('\n'),
    )
    expect(report.length).toBe(2 * ALGORITHMS.length)
  })
})
