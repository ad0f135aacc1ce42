// What shedders and adaptive limits publish on `node:diagnostics_channel`, only when someone
// listens.
import { channel } from 'node:diagnostics_channel'
import type { Priority } from './priority.js'
import type { ShedSignal } from './signals.js'

/** The channel of {@link ShedEvent}s: every request a shedder refuses (or would, in shadow). */
export const SHED_CHANNEL = 'limiter:shed'
/** The channel of `AdaptiveEvent`s: an adaptive limit's every change and probe. */
export const ADAPTIVE_CHANNEL = 'limiter:adaptive'

/** Published on `limiter:shed` for each request shed (or, in shadow mode, that would be). */
export interface ShedEvent {
  /** The shedder's `name`. */
  readonly shedder: string
  /** The class the request asked with (a named class for ranks 0 to 3). */
  readonly priority: Priority
  /** What is over: a process signal, or `'inflight'` for the adaptive limit. */
  readonly signal: ShedSignal
  /** The shedder runs in shadow mode: the request was admitted all the same. */
  readonly shadow: boolean
}

const shedChannel = channel(SHED_CHANNEL)
const adaptiveChannel = channel(ADAPTIVE_CHANNEL)

/** Publishes a shed decision (when someone listens). */
export function publishShed(
  shedder: string,
  priority: Priority,
  signal: ShedSignal,
  shadow: boolean,
): void {
  if (!shedChannel.hasSubscribers) return
  const event: ShedEvent = { shedder, priority, signal, shadow }
  shedChannel.publish(event)
}

/** Publishes an adaptive limit's state, an `AdaptiveEvent` (when someone listens). */
export function publishAdaptive(state: () => object): void {
  if (adaptiveChannel.hasSubscribers) adaptiveChannel.publish(state())
}
