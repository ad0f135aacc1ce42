// What the bridge counts, by attribute set: tallies kept here and observed by the SDK when it
// collects, since a synchronous `Counter.add` hashes its attributes on every call (microseconds
// per decision), while a tally is one increment.
import type { Attributes, ObservableResult } from '@opentelemetry/api'
import type { Decision } from '../../decision/types.js'
import type { Limiter } from '../../limiter/types.js'
import type { StoreKind } from '../events.js'

/** What `limiter.result` says about a decision. */
export type LimiterResult = 'allowed' | 'limited' | 'failed_open' | 'failed_closed' | 'local'

const RESULTS: readonly LimiterResult[] = [
  'allowed',
  'limited',
  'failed_open',
  'failed_closed',
  'local',
]
const STORES: readonly StoreKind[] = ['memory', 'redis', 'custom']

/** The index in {@link RESULTS} of `decision`'s result. */
function resultIndex(decision: Decision): number {
  switch (decision.source) {
    case 'fail-open':
      return 2
    case 'fail-closed':
      return 3
    case 'local':
      return 4
    default:
      // 'store' and 'blocked-cache' (a refusal the store made moments ago, answered again)
      return decision.allowed ? 0 : 1
  }
}

function storeIndex(store: StoreKind): number {
  return store === 'memory' ? 0 : store === 'redis' ? 1 : 2
}

/**
 * The policy a decision is reported by: on a refusal, the first refusing policy with the longest
 * `retryAfterMs` (the one the client waits for); on an admission, the first with the fewest
 * remaining (the closest to refusing).
 */
export function policyIndex(limiter: Limiter, decision: Decision): number {
  // One policy: its name, without building the decision's lazy `policies` list.
  if (limiter.policies.length === 1) return 0
  const policies = decision.policies
  let best = -1
  for (let i = 0; i < policies.length; i++) {
    const p = policies[i] as Decision['policies'][number]
    if (best === -1) {
      if (decision.allowed || !p.allowed) best = i
      continue
    }
    const b = policies[best] as Decision['policies'][number]
    if (
      decision.allowed ? p.remaining < b.remaining : !p.allowed && p.retryAfterMs > b.retryAfterMs
    )
      best = i
  }
  return best === -1 ? 0 : best
}

/** A value behind one attribute set, shared by every limiter that reports those attributes. */
export interface Tally {
  readonly attributes: Attributes
  value: number
  /**
   * The `other` series this tally was folded into (see {@link Tallies}): whoever holds it
   * counts there from now on.
   */
  into?: Tally
}

/**
 * The most attribute sets one instrument keeps apart, as a `limits` function keeps at most
 * `MAX_LIMIT_SETS` limiters (per-customer limits make a limiter name per customer; the SDK
 * exports at most 2,000 attribute sets per instrument anyway).
 */
export const MAX_TALLIES = 1000

// What the attributes of a tally that falls out become: the `other` series of its instrument,
// the limiter's name and policy replaced, the rest kept (results still add up by result).
const OTHER = 'other'
function otherOf(attributes: Attributes): Attributes {
  const out: Attributes = { ...attributes, 'otel.metric.overflow': true }
  if ('limiter.name' in out) out['limiter.name'] = OTHER
  if ('limiter.policy' in out) out['limiter.policy'] = OTHER
  return out
}

interface Kept extends Tally {
  // the value last seen, and the pass (collection or eviction) it last moved in
  seenValue: number
  movedAt: number
}

/**
 * The tallies of one instrument, by attribute set, each made once. At most {@link MAX_TALLIES}
 * are kept: past that, the idlest tenth (the longest without a change, then the oldest) is
 * folded into the `other` series. A folded tally's count so far is not moved: the SDK keeps the
 * last value it observed for an attribute set (or the series ends), and moving it would count it
 * twice there, and show in `other` as a burst of decisions that never happened. What its holder
 * counts from then on goes to `other`, so totals keep adding up. A limiter made again (a limit
 * set chosen anew) gets a series of its own again.
 */
export class Tallies {
  readonly #byKey = new Map<string, Kept>()
  readonly #others = new Map<string, Tally>()
  readonly #upDown: boolean
  #pass = 0

  /**
   * `upDown`: an up-down counter's tallies (open circuits) fold only at zero, since a tally that
   * falls out while up would stay up in the SDK while `other` is taken down.
   */
  constructor(upDown = false) {
    this.#upDown = upDown
  }

  /** How many attribute sets are kept apart (the `other` series not counted). */
  get size(): number {
    return this.#byKey.size
  }

  /** The tally of the attributes `make()` returns, which `key` identifies. */
  get(key: string, make: () => Attributes): Tally {
    let tally = this.#byKey.get(key)
    if (tally === undefined) {
      if (this.#byKey.size >= MAX_TALLIES) this.#foldIdlest()
      const attributes = Object.freeze(make())
      tally = { attributes, value: 0, seenValue: 0, movedAt: this.#pass }
      this.#byKey.set(key, tally)
    }
    return tally
  }

  /** Reports every tally to the SDK (an observable instrument's callback). */
  readonly observe = (result: ObservableResult): void => {
    this.#mark()
    for (const tally of this.#byKey.values()) result.observe(tally.value, tally.attributes)
    for (const tally of this.#others.values()) result.observe(tally.value, tally.attributes)
  }

  // A pass: every tally whose value changed since the last one is marked as moved in it.
  #mark(): void {
    const pass = ++this.#pass
    for (const tally of this.#byKey.values()) {
      if (tally.value === tally.seenValue) continue
      tally.seenValue = tally.value
      tally.movedAt = pass
    }
  }

  #foldIdlest(): void {
    this.#mark()
    // Map order is creation order, and the sort is stable: the oldest of the idlest go first
    const idlest = [...this.#byKey]
      .filter(([, t]) => !this.#upDown || t.value === 0)
      .sort(([, a], [, b]) => a.movedAt - b.movedAt)
    for (const [key, tally] of idlest.slice(0, Math.ceil(MAX_TALLIES / 10))) {
      this.#byKey.delete(key)
      tally.into = this.#other(tally.attributes)
    }
  }

  #other(attributes: Attributes): Tally {
    const folded = otherOf(attributes)
    const key = JSON.stringify(Object.entries(folded))
    let tally = this.#others.get(key)
    if (tally === undefined) {
      tally = { attributes: Object.freeze(folded), value: 0 }
      this.#others.set(key, tally)
    }
    return tally
  }
}

/** The bridge's tallies, one set per instrument. */
export interface BridgeTallies {
  readonly decisions: Tallies
  readonly failures: Tallies
  readonly circuits: Tallies
}

/** One limiter's tallies and attribute sets, looked up as its events need them. */
export class LimiterTallies {
  readonly #limiter: Limiter
  readonly #tallies: BridgeTallies
  readonly #decisions: (Tally | undefined)[] = []
  readonly #durations: (Attributes | undefined)[] = []
  readonly #failures = new Map<string, Tally>()
  #circuit: Tally | undefined
  /** The failure domains whose circuit this limiter reported open (and not closed since). */
  readonly openDomains = new Set<string>()

  constructor(limiter: Limiter, tallies: BridgeTallies) {
    this.#limiter = limiter
    this.#tallies = tallies
  }

  /** For `limiter.decisions`: name, policy, result, store and shadow. */
  decision(decision: Decision, store: StoreKind, shadow: boolean): Tally {
    const policy = policyIndex(this.#limiter, decision)
    const result = resultIndex(decision)
    const i =
      ((policy * RESULTS.length + result) * STORES.length + storeIndex(store)) * 2 +
      (shadow ? 1 : 0)
    let tally = this.#decisions[i]
    if (tally?.into !== undefined) {
      tally = tally.into
      this.#decisions[i] = tally
    }
    if (tally === undefined) {
      const name = this.#limiter.name
      const policyName = this.#limiter.policies[policy]?.name ?? name
      const resultName = RESULTS[result] as LimiterResult
      tally = this.#tallies.decisions.get(
        JSON.stringify([name, policyName, resultName, store, shadow]),
        () => ({
          'limiter.name': name,
          'limiter.policy': policyName,
          'limiter.result': resultName,
          'limiter.store': store,
          'limiter.shadow': shadow,
        }),
      )
      this.#decisions[i] = tally
    }
    return tally
  }

  /** For `limiter.store.duration`: name and store. */
  duration(store: StoreKind): Attributes {
    const s = storeIndex(store)
    let attributes = this.#durations[s]
    if (attributes === undefined) {
      attributes = Object.freeze({ 'limiter.name': this.#limiter.name, 'limiter.store': store })
      this.#durations[s] = attributes
    }
    return attributes
  }

  /** For `limiter.store.failures`: name and `error.type` (the error's code). */
  failure(code: string): Tally {
    let tally = this.#failures.get(code)
    if (tally?.into !== undefined) {
      tally = tally.into
      this.#failures.set(code, tally)
    }
    if (tally === undefined) {
      const name = this.#limiter.name
      tally = this.#tallies.failures.get(JSON.stringify([name, code]), () => ({
        'limiter.name': name,
        'error.type': code,
      }))
      this.#failures.set(code, tally)
    }
    return tally
  }

  /** For `limiter.circuits.open`: name. */
  circuit(): Tally {
    const name = this.#limiter.name
    this.#circuit = this.#circuit?.into ?? this.#circuit
    this.#circuit ??= this.#tallies.circuits.get(name, () => ({ 'limiter.name': name }))
    return this.#circuit
  }
}
