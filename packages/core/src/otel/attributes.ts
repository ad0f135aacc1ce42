// The attributes the bridge records, made once per combination and per limiter, not per event.
import type { Attributes } from '@opentelemetry/api'
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

/** One limiter's attribute sets, made as events need them. */
export class LimiterAttributes {
  readonly #limiter: Limiter
  readonly #decisions: (Attributes | undefined)[] = []
  readonly #durations: (Attributes | undefined)[] = []
  readonly #failures = new Map<string, Attributes>()
  readonly #circuit: Attributes

  constructor(limiter: Limiter) {
    this.#limiter = limiter
    this.#circuit = Object.freeze({ 'limiter.name': limiter.name })
  }

  /** For `limiter.decisions`: name, policy, result, store and shadow. */
  decision(decision: Decision, store: StoreKind, shadow: boolean): Attributes {
    const policy = policyIndex(this.#limiter, decision)
    const result = resultIndex(decision)
    const s = storeIndex(store)
    const i = ((policy * RESULTS.length + result) * STORES.length + s) * 2 + (shadow ? 1 : 0)
    let attributes = this.#decisions[i]
    if (attributes === undefined) {
      attributes = Object.freeze({
        'limiter.name': this.#limiter.name,
        'limiter.policy': this.#limiter.policies[policy]?.name ?? this.#limiter.name,
        'limiter.result': RESULTS[result] as LimiterResult,
        'limiter.store': store,
        'limiter.shadow': shadow,
      })
      this.#decisions[i] = attributes
    }
    return attributes
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
  failure(code: string): Attributes {
    let attributes = this.#failures.get(code)
    if (attributes === undefined) {
      attributes = Object.freeze({ 'limiter.name': this.#limiter.name, 'error.type': code })
      this.#failures.set(code, attributes)
    }
    return attributes
  }

  /** For `limiter.circuits.open`: name. */
  circuit(): Attributes {
    return this.#circuit
  }
}
