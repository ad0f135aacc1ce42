// How an admission ends: with a sample of its round trip, or ignored (it never ran, or it was a
// refusal further on), so that only requests that reached the work teach the adaptive limit.
import type { DoneOptions } from './adaptive.js'

/** Ends an admission without a sample: the request never reached the work. */
export const IGNORE: DoneOptions = Object.freeze({ ignore: true })

/**
 * How an admission whose response closed with `status` ends: a 429 (a rate limit further on)
 * or a 503 (a fleet reserve, a shedder, or a handler saying it is overloaded) is a refusal
 * answered in microseconds, and ends ignored; any other status, or none (the client left),
 * is a sample, less `waitedMs` the request waited on purpose before it ran (`maxDelay`).
 */
export function doneOptionsOf(status: number | undefined, waitedMs = 0): DoneOptions | undefined {
  if (status === 429 || status === 503) return IGNORE
  return waitedMs > 0 ? { waitedMs } : undefined
}
