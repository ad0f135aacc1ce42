// Core test setup for the failover tests (Cluster, Sentinel): a round of decisions from limiters
// in both failure modes, and the watch of a failover from the kill to Redis deciding again.
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { type Decision, failureOf, type Limiter } from '../../src/index.js'

/** One decision of a round: the limiter's failure mode, the key, the decision, how long it took. */
export interface Shot {
  readonly failureMode: 'open' | 'closed'
  readonly key: string
  readonly decision: Decision
  readonly ms: number
}

/** Consumes each of `keys` once on each limiter, all at once. */
export function consumeRound(
  limiters: ReadonlyArray<{ failureMode: 'open' | 'closed'; limiter: Limiter }>,
  keys: readonly string[],
): Promise<Shot[]> {
  return Promise.all(
    limiters.flatMap(({ failureMode, limiter }) =>
      keys.map(async (key) => {
        const started = performance.now()
        const decision: Decision = await limiter.consume(key)
        return { failureMode, key, decision, ms: performance.now() - started }
      }),
    ),
  )
}

/**
 * Runs `round` until one round is decided by Redis throughout (a fresh client's first round may
 * miss the deadline on a loaded machine: node-redis 6 was seen to), at most 10 times: whether one
 * was.
 */
export async function healthyFirst(round: () => Promise<readonly Shot[]>): Promise<boolean> {
  for (let i = 0; i < 10; i++)
    if ((await round()).every((shot) => failureOf(shot.decision) === undefined)) return true
  return false
}

/** What watchFailover saw (times in ms from the kill). */
export interface Failover {
  readonly shots: Shot[]
  /** When `promoted()` first said so. */
  readonly promotedMs: number | undefined
  /** When the rounds after the promotion started being decided by Redis, and stayed so. */
  readonly resumedMs: number | undefined
  /** The longest event-loop stall of this process meanwhile, less the 10 ms resolution. */
  readonly stallMs: number
}

/**
 * Runs `kill`, then rounds 50 ms apart until 5 rounds in a row after `promoted()` were all
 * decided by Redis, or `maxMs` passed.
 */
export async function watchFailover(options: {
  readonly round: () => Promise<Shot[]>
  readonly kill: () => void
  readonly promoted: () => boolean
  readonly maxMs: number
}): Promise<Failover> {
  const lag = monitorEventLoopDelay({ resolution: 10 })
  lag.enable()
  const killedAt = performance.now()
  options.kill()
  const shots: Shot[] = []
  let promotedMs: number | undefined
  let resumedMs: number | undefined
  let healthyRounds = 0
  while (performance.now() - killedAt < options.maxMs && healthyRounds < 5) {
    const batch = await options.round()
    shots.push(...batch)
    if (promotedMs === undefined && options.promoted()) promotedMs = performance.now() - killedAt
    if (promotedMs !== undefined && batch.every((s) => failureOf(s.decision) === undefined)) {
      healthyRounds++
      resumedMs ??= performance.now() - killedAt
    } else {
      healthyRounds = 0
      resumedMs = undefined
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  lag.disable()
  return { shots, promotedMs, resumedMs, stallMs: Math.max(0, lag.max / 1e6 - 10) }
}
