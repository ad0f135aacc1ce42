// Limiter names: the deterministic default, and validation of `name` and `prefix`.
import { wholeUnit } from '../common/duration.js'
import { LimiterRangeError, LimiterTypeError } from '../common/errors.js'
import { ALGORITHM_CODE, type Algorithm, type Policy } from './policy.js'

// Braces would break the Redis hash tag; control characters would blur namespaces, and so would
// lone surrogates (Redis receives each as U+FFFD).
function hasForbiddenChar(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i)
    if (code < 0x20 || code === 0x7b || code === 0x7d) return true
    if (code >= 0xd800 && code <= 0xdfff) {
      const next = value.charCodeAt(i + 1)
      if (code > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) return true
      i++
    }
  }
  return false
}

// The window in its largest whole unit: 86400000 -> '1d', 90000 -> '90s', 1500 -> '1500ms'.
function compactWindow(ms: number): string {
  const unit = wholeUnit(ms)
  return unit === undefined ? `${ms}ms` : `${unit.count}${unit.suffix}`
}

/**
 * The default name: algorithm code, limit per window, and burst when it differs from the limit:
 * `sw100/1m`, `gc10/1sb20`. Short, because it is part of every Redis key (and of the draft-10
 * headers' policy name).
 */
export function defaultName(policy: Policy): string {
  const base = `${ALGORITHM_CODE[policy.algorithm]}${policy.limit}/${compactWindow(policy.windowMs)}`
  return policy.burst === policy.limit ? base : `${base}b${policy.burst}`
}

/** Validates `name` or `prefix`. */
export function checkName(option: string, value: unknown, allowEmpty: boolean): string {
  if (typeof value !== 'string' || (!allowEmpty && value.length === 0)) {
    throw new LimiterTypeError(option, value, allowEmpty ? 'a string' : 'a non-empty string')
  }
  if (hasForbiddenChar(value)) {
    throw new LimiterRangeError(
      option,
      value,
      'must not contain `{`, `}`, control characters or lone surrogates (they would break the Redis hash tag or merge names)',
    )
  }
  return value
}

/** The layout of each algorithm's state (token-bucket and leaky-bucket run GCRA's). */
export const STATE_CODE: Readonly<Record<Algorithm, string>> = {
  'fixed-window': 'fw',
  'sliding-window': 'sw',
  'sliding-log': 'sl',
  'token-bucket': 'gc',
  'leaky-bucket': 'gc',
  gcra: 'gc',
  concurrency: 'cc',
}

/**
 * The namespace of a limiter's keys in its store: `prefix + name + ':'`. A name the user chose
 * also carries the algorithm's state layout (`login:fw:`), so two limiters named alike with
 * different algorithms keep apart instead of misreading each other's state (which limited
 * nothing on Redis). A default name already starts with the algorithm's code.
 */
export function storeNamespace(
  prefix: string,
  name: string,
  algorithm: Algorithm,
  chosen: boolean,
): string {
  return chosen ? `${prefix}${name}:${STATE_CODE[algorithm]}:` : `${prefix}${name}:`
}

// The algorithm of each chosen name per store, and how many live limiters hold it, to refuse a
// second limiter that disagrees while one that holds the name is alive. A claim leaves when the
// GC reports its last limiter gone: limiters made per request (say, per plan) never grow the
// registry, and a live limiter's claim is never let go, so a conflict with it is always found.
// (No WeakRef: one would keep its limiter alive until the end of the turn that made it.)
interface Claim {
  readonly algorithm: Algorithm
  live: number
}
interface Claims {
  readonly claims: Map<string, Claim>
  readonly gone: FinalizationRegistry<string>
}
const CLAIMS = new WeakMap<object, Claims>()

function claimsOf(store: object): Claims {
  let held = CLAIMS.get(store)
  if (held === undefined) {
    const claims = new Map<string, Claim>()
    const gone = new FinalizationRegistry<string>((id) => {
      const claim = claims.get(id)
      if (claim !== undefined && --claim.live === 0) claims.delete(id)
    })
    held = { claims, gone }
    CLAIMS.set(store, held)
  }
  return held
}

/**
 * Records that `store` holds `prefix` + `name` for `algorithm`, for as long as `owner` (what
 * the limiter keeps, e.g. its policies) is alive; throws if another live limiter in this
 * process uses that name on that store with another algorithm.
 */
export function claimName(
  store: object,
  prefix: string,
  name: string,
  algorithm: Algorithm,
  owner: object,
): void {
  const { claims, gone } = claimsOf(store)
  const id = `${prefix}${name}`
  const claim = claims.get(id)
  if (claim !== undefined && claim.algorithm !== algorithm)
    throw new LimiterRangeError(
      'name',
      name,
      `is already used on this store (prefix ${JSON.stringify(prefix)}) by a limiter with algorithm '${claim.algorithm}', and this one is '${algorithm}': limiters that share a name share counters, so they must share the algorithm; give one of them another \`name\``,
      'ERR_LIMITER_CONFLICT',
    )
  if (claim === undefined) claims.set(id, { algorithm, live: 1 })
  else claim.live++
  gone.register(owner, id)
}

/** How many names `store` has claims for (live or not yet scanned), for tests. */
export function claimCount(store: object): number {
  return CLAIMS.get(store)?.claims.size ?? 0
}
