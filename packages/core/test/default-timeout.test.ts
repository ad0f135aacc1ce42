// The default deadline, checked by measurement: a healthy private Redis under bursts of 2,000
// concurrent decisions never trips it (a tripped deadline in 'open' mode admits extra requests).
// Prints the worst latency seen, with and without batching.
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { describe, expect, it } from 'vitest'
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

const report: string[] = []

describe.each([
  ['batched (default)', undefined],
  ['batch: false', false as const],
])(`default timeout, ${BURST} concurrent decisions, %s`, (_label, batch) => {
  it.each(ALGORITHMS)(
    '%s: no deadline fires; every decision comes from Redis',
    async (algorithm) => {
      const errors: LimiterError[] = []
      const store = new RedisStore({ client: redis.client, ...(batch === false ? { batch } : {}) })
      // Defaults apart from the hook: timeout, failureMode 'open', circuit breaker.
      const limiter = createLimiter({
        algorithm,
        limit: 1_000,
        window: '1m',
        prefix: `burst-${batch === false ? 'single' : 'batched'}:`,
        store,
        onError: (error) => errors.push(error),
      })
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
      report.push(
        `| ${_label} | ${algorithm} | ${Math.round(worstMs)} ms | ${Math.round(Math.max(0, lag.max / 1e6 - 10))} ms |`,
      )
      expect(errors).toEqual([])
      expect(worstMs).toBeLessThan(DEFAULT_TIMEOUT_MS)
      expect(slowestBurstMs).toBeLessThan(DEFAULT_TIMEOUT_MS)
    },
  )
})

describe('report', () => {
  it('prints the worst latencies', () => {
    console.log(
      [
        '',
        `Worst decision latency in bursts of ${BURST} concurrent decisions (x${REPETITIONS}, distinct keys and one hot key) on a private Redis; default timeout ${DEFAULT_TIMEOUT_MS} ms`,
        '| store | algorithm | worst latency | longest event-loop stall |',
        '|---|---|---|---|',
        ...report,
      ].join('\n'),
    )
    expect(report.length).toBe(2 * ALGORITHMS.length)
  })
})
