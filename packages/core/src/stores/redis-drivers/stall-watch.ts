// Notices a Cluster master that stops answering while its connection stays up (a hung or
// SIGSTOPped process, a host that drops packets): its client sees nothing wrong and keeps the
// slot map that names it, even after the cluster has promoted its replica. The Cluster drivers
// then have the client look for the slot's owner again (see ioredis.ts, node-redis.ts).
import { monotonicMs } from '../../common/clock.js'

/** How long a master may leave every outstanding call unanswered before it counts as silent. */
export const SILENT_MS = 1000

// How often, at most, a driver looks for a silent master's replacement: the client asks a live
// node for the slot map (ioredis: CLUSTER SLOTS) or about the slot's owner (node-redis: EXISTS).
const LOOK_EVERY_MS = 1000

/**
 * The calls outstanding on one master and how long it has been silent. Costs one clock read
 * and one `then` per script call (a batch), nothing per decision.
 */
export class StallWatch {
  #pending = 0
  // An answer came since the last call was sent: silence starts again at the next one.
  #heard = false
  #silentSinceMs = 0
  #lookedAtMs = Number.NEGATIVE_INFINITY
  readonly #answered = (): void => {
    this.#pending--
    this.#heard = true
  }

  /**
   * Counts `sent` until it settles (a reply or an error alike: the master, or the client, has
   * answered). True when calls have been outstanding on this master with no answer for
   * `SILENT_MS`, at most once a second: time to look for its replacement.
   */
  track(sent: Promise<unknown>): boolean {
    const now = monotonicMs()
    if (this.#pending === 0 || this.#heard) {
      this.#heard = false
      this.#silentSinceMs = now
    }
    this.#pending++
    sent.then(this.#answered, this.#answered)
    if (now - this.#silentSinceMs < SILENT_MS || now - this.#lookedAtMs < LOOK_EVERY_MS)
      return false
    this.#lookedAtMs = now
    return true
  }
}

/** The watch of each master (`host:port`) of a Cluster client, made on first use. */
export class StallWatches {
  readonly #of = new Map<string, StallWatch>()

  of(master: string): StallWatch {
    let watch = this.#of.get(master)
    if (watch === undefined) {
      watch = new StallWatch()
      this.#of.set(master, watch)
    }
    return watch
  }
}
