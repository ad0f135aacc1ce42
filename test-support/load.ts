// Time budgets that hold on a busy machine. A latency bound measured on an idle machine (a
// deadline plus 50 ms, say) fails when other work shares the cores: the OS runs this process,
// Redis and the children late, and every hop of a request can wait for a core. So a test that
// bounds a latency gives it the slack it needs idle, scaled by how late this process's timers
// run (its event-loop delay, measured before and during the timed work), and its failure
// message says where the bound came from.
import { monitorEventLoopDelay } from 'node:perf_hooks'

/** The sampling resolution: the histogram records each turn's lateness past this. */
const RESOLUTION_MS = 1

/** The machine's load as this process sees it: its event-loop delay since `watchLoad`. */
export interface Load {
  /** The event-loop delay p99 so far, in ms past the resolution: under 0.5 on an idle machine. */
  p99Ms(): number
  /** How much idle slack is multiplied by: 1 + p99Ms(), at most the cap. */
  factor(): number
  /**
   * A bound for something that takes `fixedMs` by design (a deadline, a timer) plus at most
   * `idleSlackMs` of work on an idle machine: `fixedMs + idleSlackMs * factor()`.
   */
  budget(fixedMs: number, idleSlackMs: number): number
  /** For failure messages: the bound and what it was derived from. */
  describe(fixedMs: number, idleSlackMs: number): string
  /** Stops sampling (the last values stay readable). */
  stop(): void
}

/**
 * Starts sampling this process's event-loop delay, and resolves after `sampleMs` (about 200 ms)
 * so that a budget taken at once already reflects the load. Sampling goes on until `stop()`, so a
 * budget taken after the timed work also counts the delays during it; `during: false` stops it
 * after the first sample, for timed work that blocks the loop itself (a burst of 2,000 calls
 * would otherwise raise its own budget). `cap` bounds the factor: a budget stays below what the
 * broken behaviour would show (a deadline that never fires waits for the whole outage), so the
 * test can still fail however busy the machine is.
 */
export async function watchLoad(
  options: { sampleMs?: number; cap?: number; during?: boolean } = {},
): Promise<Load> {
  const { sampleMs = 200, cap = 20, during = true } = options
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
  histogram.enable()
  await new Promise((resolve) => setTimeout(resolve, sampleMs))
  if (!during) histogram.disable()
  const p99Ms = () => Math.max(0, histogram.percentile(99) / 1e6 - RESOLUTION_MS)
  const factor = () => Math.min(cap, 1 + p99Ms())
  const budget = (fixedMs: number, idleSlackMs: number) => fixedMs + idleSlackMs * factor()
  return {
    p99Ms,
    factor,
    budget,
    describe: (fixedMs, idleSlackMs) =>
      `bound ${Math.round(budget(fixedMs, idleSlackMs))} ms = ${fixedMs} + ${idleSlackMs} x ${factor().toFixed(2)} (event-loop delay p99 ${p99Ms().toFixed(2)} ms)`,
    stop: () => histogram.disable(),
  }
}

/**
 * Calls `attempt(0)`, `attempt(1)`, ... every `everyMs` until one returns something other than
 * undefined, for at most `withinMs`; undefined if none did. For "works again after a fault"
 * checks: one call with a short deadline proves nothing on a busy machine (its reply may come
 * late), while a behaviour that never comes back still fails.
 */
export async function eventually<T>(
  attempt: (i: number) => Promise<T | undefined>,
  withinMs: number,
  everyMs = 50,
): Promise<T | undefined> {
  const until = performance.now() + withinMs
  for (let i = 0; performance.now() < until; i++) {
    const result = await attempt(i)
    if (result !== undefined) return result
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
  return undefined
}
