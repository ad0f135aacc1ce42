// The instruments and tallies of each meter, shared by every bridge on it.
import type { Meter } from '@opentelemetry/api'
import { AttributeSets, type BridgeTallies, Tallies } from './attributes.js'
import { type Instruments, instrumentsOn } from './instruments.js'

// One set of instruments and tallies per meter, shared by every bridge on it: the counts add up
// as a synchronous counter's would, and outlive a stopped bridge (still reported, no longer
// moving), so a bridge started again continues them.
const perMeter = new WeakMap<Meter, { instruments: Instruments; tallies: BridgeTallies }>()

/** The instruments and tallies of `meter`, made on first use. */
export function sharedBy(meter: Meter): { instruments: Instruments; tallies: BridgeTallies } {
  let shared = perMeter.get(meter)
  if (shared === undefined) {
    const instruments = instrumentsOn(meter)
    const tallies: BridgeTallies = {
      decisions: new Tallies(),
      failures: new Tallies(),
      circuits: new Tallies(),
      durations: new AttributeSets(),
    }
    instruments.decisions.addCallback(tallies.decisions.observe)
    instruments.storeFailures.addCallback(tallies.failures.observe)
    instruments.circuitsOpen.addCallback(tallies.circuits.observe)
    shared = { instruments, tallies }
    perMeter.set(meter, shared)
  }
  return shared
}
