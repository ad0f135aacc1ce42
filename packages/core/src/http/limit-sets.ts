// What a request is checked against: a limiter with its header policies, fixed at construction
// or chosen per request by a `limits` function (memoized, with bounded memory).

import type { LimiterError } from '../common/errors.js'
import { createLimiter, type Limiter } from '../limiter/create-limiter.js'
import type { LimiterStoreOptions } from '../limiter/types.js'
import { MAX_LIMITS } from '../policies/limits.js'
import {
  type Algorithm,
  definePolicy,
  type LimitSpec,
  type Policy,
  type PolicyOptions,
} from '../policies/policy.js'
import { MemoryStore } from '../stores/memory-store.js'
import { invoke, isThenable, type MaybePromise, misbehaved } from './callbacks.js'
import { type HeaderPolicy, headerPolicies, headerPolicy } from './headers.js'

/** A limiter and its header policies. */
export interface LimitSet {
  readonly limiter: Limiter
  /**
   * Whether the limiter holds a concurrency policy, so that its admissions hold a lease the
   * adapter releases when the response is over (found once here, not per request).
   */
  readonly leases: boolean
  /** The limiter is in shadow mode (`mode: 'shadow'`): its refusals are not enforced. */
  readonly shadow: boolean
  /**
   * The header policy: the policies' own names, whatever the route (a route scope stays in the
   * counter's key, never in what clients read).
   */
  readonly headerPolicy: HeaderPolicy
}

/** A `limits` option given as a function of the request. */
export type LimitsFunction<Req> = (
  req: Req,
) => LimitSpec | readonly LimitSpec[] | PromiseLike<LimitSpec | readonly LimitSpec[]>

/** The limit set of `limiter`, with its header policies built once. */
export function limitSet(limiter: Limiter): LimitSet {
  const { policies } = limiter
  const concurrent = (p: Policy) => p.algorithm === 'concurrency'
  const p = limiter.policy
  return Object.freeze({
    limiter,
    leases: policies.some(concurrent),
    shadow: limiter.mode === 'shadow',
    headerPolicy:
      policies.length === 1
        ? headerPolicy(limiter.name, p.limit, p.windowMs, concurrent(p))
        : headerPolicies(
            limiter.name,
            policies.map((q) => headerPolicy(q.name, q.limit, q.windowMs, concurrent(q))),
          ),
  })
}

/** The most limiters one `limits` function keeps: the least recently used goes first. */
export const MAX_LIMIT_SETS = 1000

/**
 * The limit set for each request, from a `limits` function: its policies are validated (with
 * the same rules and errors as fixed ones) the first time they are seen, and their limiter is
 * kept for the next request with the same policies. At most {@link MAX_LIMIT_SETS} are kept,
 * so policies an attacker can vary never grow memory without bound. A throwing function or a
 * bad policy fails the request with a `LimiterError` naming `limits`; two sets that give one
 * policy name two algorithms fail with `ERR_LIMITER_CONFLICT`, naming both sets, the first time
 * the second one is seen.
 */
export function limitsPerRequest<Req>(
  limits: LimitsFunction<Req>,
  shared: LimiterStoreOptions,
): (req: Req) => MaybePromise<LimitSet> {
  const sets = new Map<string, LimitSet>()
  const owners = new PolicyOwners()
  // Every plan's limiter counts in one store (a MemoryStore of their own when none is given),
  // so plans that share a policy name share its counters.
  let store = shared.store
  const setOf = (value: unknown): LimitSet => {
    const specs = Array.isArray(value) ? value : [value]
    // before anything reads them: a huge array would cost its JSON text on every request
    if (specs.length < 1 || specs.length > MAX_LIMITS)
      throw misbehaved(
        'limits',
        `returned ${specs.length} policies (expected 1 to ${MAX_LIMITS})`,
        'ERR_LIMITER_OPTION',
      )
    const id = idOf(specs)
    const known = id === undefined ? undefined : sets.get(id)
    if (known !== undefined) {
      // most recently used last
      sets.delete(id as string)
      sets.set(id as string, known)
      return known
    }
    store ??= new MemoryStore()
    const made = built(specs, id, owners, () =>
      createLimiter({ ...shared, store, limits: specs as readonly LimitSpec[] }),
    )
    if (id !== undefined) {
      if (sets.size >= MAX_LIMIT_SETS) sets.delete(sets.keys().next().value as string)
      sets.set(id, made)
    }
    return made
  }
  return (req) => {
    const value = invoke('limits', 'ERR_LIMITER_OPTION', () => limits(req))
    return isThenable(value) ? Promise.resolve(value).then(setOf) : setOf(value)
  }
}

// The limit set of a list of policies seen for the first time, or the error naming `limits`.
function built(
  specs: readonly unknown[],
  id: string | undefined,
  owners: PolicyOwners,
  create: () => Limiter,
): LimitSet {
  const text = id ?? '(policies JSON cannot show)'
  let limiter: Limiter
  try {
    limiter = create()
  } catch (error) {
    const conflict =
      error instanceof Error && (error as { code?: unknown }).code === 'ERR_LIMITER_CONFLICT'
    const taken = conflict ? owners.conflictOf(specs, text, error) : undefined
    if (taken !== undefined) throw taken
    throw misbehaved(
      'limits',
      `returned policies that are not valid: ${error instanceof Error ? error.message : String(error)}`,
      conflict ? 'ERR_LIMITER_CONFLICT' : 'ERR_LIMITER_OPTION',
      error,
    )
  }
  const windowed = owners.windowConflictOf(limiter, text)
  if (windowed !== undefined) throw windowed
  owners.record(limiter, text)
  return limitSet(limiter)
}

// The algorithms whose state is one window's count (policy.ts's COUNTING without `concurrency`,
// whose leases carry their own expiry): a request under another window reads it as its own (a
// sliding window drops what is older than its window, a fixed window restarts), so tiers cannot
// give one name two windows on them. The GCRA family keeps a time any rate reads.
const WINDOW_COUNTS: ReadonlySet<Algorithm> = new Set([
  'fixed-window',
  'sliding-window',
  'sliding-log',
])

/**
 * The set of policies that first gave each policy name its algorithm, to name both sets when
 * another one gives that name another algorithm (at most {@link MAX_LIMIT_SETS} names).
 */
class PolicyOwners {
  readonly #owners = new Map<string, { algorithm: Algorithm; windowMs: number; specs: string }>()

  record(limiter: Limiter, specs: string): void {
    for (const p of limiter.policies) {
      if (this.#owners.has(p.name)) continue
      if (this.#owners.size >= MAX_LIMIT_SETS)
        this.#owners.delete(this.#owners.keys().next().value as string)
      this.#owners.set(p.name, { algorithm: p.algorithm, windowMs: p.windowMs, specs })
    }
  }

  /**
   * The conflict error when `limiter` (built from `text`) gives a counting policy's name another
   * window than the set that holds it (one request under the shorter window would drop the
   * longer one's count: 199 a minute passed a 100-an-hour tier).
   */
  windowConflictOf(limiter: Limiter, text: string): LimiterError | undefined {
    for (const p of limiter.policies) {
      const owner = this.#owners.get(p.name)
      if (owner === undefined || owner.specs === text || !WINDOW_COUNTS.has(p.algorithm)) continue
      if (owner.algorithm !== p.algorithm || owner.windowMs === p.windowMs) continue
      return misbehaved(
        'limits',
        `returned ${text}, whose '${p.algorithm}' policy ${JSON.stringify(p.name)} has a window of ${p.windowMs} ms, but it returned ${owner.specs} before, where its window is ${owner.windowMs} ms: tiers that share a policy name share its counters, and a '${p.algorithm}' count is one window's (a request under the shorter window would drop the longer one's count); tiers differ by \`limit\`: give one of them another \`name\`, or the same \`window\``,
        'ERR_LIMITER_CONFLICT',
      )
    }
    return undefined
  }

  // The conflict error naming both sets, when the set that holds the name is known.
  conflictOf(specs: readonly unknown[], text: string, cause: Error): LimiterError | undefined {
    const name = (cause as { value?: unknown }).value
    const owner = typeof name === 'string' ? this.#owners.get(name) : undefined
    if (owner === undefined || owner.specs === text) return undefined
    const spec = specs.find((s) => (s as { name?: unknown } | null)?.name === name)
    const algorithm = definePolicy(spec as PolicyOptions).algorithm
    return misbehaved(
      'limits',
      `returned ${text}, whose policy ${JSON.stringify(name)} is '${algorithm}', but it returned ${owner.specs} before, where ${JSON.stringify(name)} is '${owner.algorithm}': tiers that share a policy name share its counters, so they must share the algorithm; give one of them another \`name\``,
      'ERR_LIMITER_CONFLICT',
      cause,
    )
  }
}

// The identity of a list of policies, or undefined when it has none (a value JSON cannot hold).
function idOf(specs: readonly unknown[]): string | undefined {
  try {
    return JSON.stringify(specs)
  } catch {
    return undefined
  }
}
