// `limiter.shed`: the requests shedders refused (or would have, in shadow mode), by shedder,
// class and signal, from the `limiter:shed` channel.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import type { Meter } from '@opentelemetry/api'
import { SHED_CHANNEL, type ShedEvent } from '../../shed/events.js'
import { Tallies } from './attributes.js'

/** The metric name of shed requests. */
export const SHED_METRIC = 'limiter.shed'

// one counter and its tallies per meter, shared by every bridge on it (as the others are)
const perMeter = new WeakMap<Meter, Tallies>()

function talliesOf(meter: Meter): Tallies {
  let tallies = perMeter.get(meter)
  if (tallies === undefined) {
    tallies = new Tallies()
    meter
      .createObservableCounter(SHED_METRIC, {
        unit: '{request}',
        description: 'Requests a process shedder refused, by shedder, priority class and signal.',
      })
      .addCallback(tallies.observe)
    perMeter.set(meter, tallies)
  }
  return tallies
}

/**
 * Counts every `limiter:shed` event on `meter` as `limiter.shed` (`limiter.name` the shedder,
 * `limiter.priority`, `limiter.signal`, `limiter.shadow`) until the returned function is called.
 */
export function recordShedding(meter: Meter): () => void {
  const tallies = talliesOf(meter)
  const onShed = (message: unknown) => {
    try {
      const { shedder, priority, signal, shadow } = message as ShedEvent
      tallies.get(JSON.stringify([shedder, priority, signal, shadow]), () => ({
        'limiter.name': shedder,
        'limiter.priority': String(priority),
        'limiter.signal': signal,
        'limiter.shadow': shadow,
      })).value++
    } catch {}
  }
  subscribe(SHED_CHANNEL, onShed)
  return () => unsubscribe(SHED_CHANNEL, onShed)
}
