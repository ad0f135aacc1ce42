// The closed-loop load driver for in-process decisions: `inFlight` concurrent callers, each
// awaiting one decision before asking the next, until a time or count bound is reached.
import { performance } from 'node:perf_hooks'
import { percentile } from './stats.mjs'

const SAMPLE_SIZE = 1 << 18

/**
 * Runs `decide(key)` (returning a boolean or a promise of one; with `allowedOf`, any result,
 * which `allowedOf(result)` reads as allowed or not, as a caller reads a limiter's answer once it
 * has it) from `inFlight` concurrent
 * loops for `durationMs` or `maxOps` decisions, whichever comes first, then waits for the
 * calls in flight. Returns decisions/s, p50/p99 latency (ms), Node CPU µs per decision, the
 * share allowed, and the error count. Latency is sampled (reservoir of 2^18) so memory stays flat.
 */
export async function drive(
  decide,
  { keyAt, inFlight, durationMs, maxOps = Number.MAX_SAFE_INTEGER, allowedOf },
) {
  const samples = new Float64Array(SAMPLE_SIZE)
  let issued = 0
  let done = 0
  let allowed = 0
  let errors = 0
  let firstError
  let stop = false
  const cpuBefore = process.cpuUsage()
  const startedAt = performance.now()
  const endAt = startedAt + durationMs

  const record = (ms) => {
    if (done < SAMPLE_SIZE) samples[done] = ms
    else {
      const slot = Math.floor(Math.random() * (done + 1))
      if (slot < SAMPLE_SIZE) samples[slot] = ms
    }
    done++
  }

  const loop = async () => {
    while (!stop) {
      if (issued++ >= maxOps) break
      const t0 = performance.now()
      try {
        const result = await decide(keyAt(issued))
        if (allowedOf === undefined ? result : allowedOf(result)) allowed++
      } catch (error) {
        errors++
        firstError ??= error
      }
      const t1 = performance.now()
      record(t1 - t0)
      // Checked per call: in-process stores resolve on microtasks, so a timer would never fire.
      if (t1 >= endAt) stop = true
    }
    stop = true
  }

  await Promise.all(Array.from({ length: inFlight }, loop))
  const elapsedMs = performance.now() - startedAt
  const cpu = process.cpuUsage(cpuBefore)
  const sorted = samples.subarray(0, Math.min(done, SAMPLE_SIZE)).sort()
  return {
    decisions: done,
    elapsedMs,
    perSecond: (done * 1000) / elapsedMs,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    cpuUsPerDecision: done === 0 ? Number.NaN : (cpu.user + cpu.system) / done,
    allowedShare: done === 0 ? Number.NaN : allowed / done,
    errors,
    firstError: firstError === undefined ? undefined : String(firstError?.message ?? firstError),
  }
}
