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
}

/**
 * The most attribute sets one instrument is given over the process's life. The SDK keeps every
 * set it has observed for as long as the process runs (a cumulative series never ends) and
 * exports at most 2,000 per instrument: past those, it counts new ones in an overflow series it
 * miscounts. Limiter names come and go (a `limits` function makes one per plan chosen), so the
 * bound is on sets ever made, not on those alive.
 */
export const MAX_TALLIES = 1000

// What the attributes past the bound become: the `other` series of its instrument, the
// limiter's name and policy replaced, the rest kept (results still add up by result).
const OTHER = 'other'
function otherOf(attributes: Attributes): Attributes {
  const out: Attributes = { ...attributes, 'otel.metric.overflow': true }
  if ('limiter.name' in out) out['limiter.name'] = OTHER
  if ('limiter.policy' in out) out['limiter.policy'] = OTHER
  return out
}

/**
 * The tallies of one instrument, by attribute set, each made once and kept: at most
 * {@link MAX_TALLIES}. A set made after those counts in the `other` series of its kind, so totals
 * keep adding up and nothing reaches the SDK's own overflow. A limiter made again (a limit set
 * chosen anew) finds its series again.
 */
export class Tallies {
  readonly #byKey = new Map<string, Tally>()
  readonly #others = new Map<string, Tally>()

  /** How many attribute sets are kept apart (the `other` series not counted). */
  get size(): number {
    return this.#byKey.size
  }

  /** The tally of the attributes `make()` returns, which `key` identifies. */
  get(key: string, make: () => Attributes): Tally {
    let tally = this.#byKey.get(key)
    if (tally !== undefined) return tally
    if (this.#byKey.size >= MAX_TALLIES) return this.#other(make())
    tally = { attributes: Object.freeze(make()), value: 0 }
    this.#byKey.set(key, tally)
    return tally
  }

  /** Reports every tally to the SDK (an observable instrument's callback). */
  readonly observe = (result: ObservableResult): void => {
    for (const tally of this.#byKey.values()) result.observe(tally.value, tally.attributes)
    for (const tally of this.#others.values()) result.observe(tally.value, tally.attributes)
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

/**
 * The attribute sets of a synchronous instrument (the store-duration histogram), bound as
 * {@link Tallies} are: at most {@link MAX_TALLIES} made, later ones as `other`.
 */
export class AttributeSets {
  readonly #byKey = new Map<string, Attributes>()

  get(key: string, make: () => Attributes): Attributes {
    let attributes = this.#byKey.get(key)
    if (attributes !== undefined) return attributes
    if (this.#byKey.size >= MAX_TALLIES) return Object.freeze(otherOf(make()))
    attributes = Object.freeze(make())
    this.#byKey.set(key, attributes)
    return attributes
  }
}

/** The bridge's tallies, one set per instrument. */
export interface BridgeTallies {
  readonly decisions: Tallies
  readonly failures: Tallies
  readonly circuits: Tallies
  readonly durations: AttributeSets
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
      const name = this.#limiter.name
      attributes = this.#tallies.durations.get(JSON.stringify([name, store]), () => ({
        'limiter.name': name,
        'limiter.store': store,
      }))
      this.#durations[s] = attributes
    }
    return attributes
  }

  /** For `limiter.store.failures`: name and `error.type` (the error's code). */
  failure(code: string): Tally {
    let tally = this.#failures.get(code)
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
    this.#circuit ??= this.#tallies.circuits.get(name, () => ({ 'limiter.name': name }))
    return this.#circuit
  }
}
