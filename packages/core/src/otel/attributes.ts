// What the bridge counts, by attribute set: tallies kept here and observed by the SDK when it
// collects, since a synchronous `Counter.add` hashes its attributes on every call (microseconds
// per decision), while a tally is one increment.
import type { Attributes, ObservableResult } from '@opentelemetry/api'
import type { Decision } from '../decision-types.js'
import type { StoreKind } from '../events.js'
import type { Limiter } from '../limiter-types.js'

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

/** The tallies of one instrument, by attribute set, each made once. */
export class Tallies {
  readonly #byKey = new Map<string, Tally>()

  /** The tally of the attributes `make()` returns, which `key` identifies. */
  get(key: string, make: () => Attributes): Tally {
    let tally = this.#byKey.get(key)
    if (tally === undefined) {
      tally = { attributes: Object.freeze(make()), value: 0 }
      this.#byKey.set(key, tally)
    }
    return tally
  }

  /** Reports every tally to the SDK (an observable instrument's callback). */
  readonly observe = (result: ObservableResult): void => {
    for (const tally of this.#byKey.values()) result.observe(tally.value, tally.attributes)
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
