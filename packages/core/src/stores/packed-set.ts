// Which policy sets keep their state in one key per user key (lua/lib/packed-limits.lua).
import type { PolicySet } from '../policies/limits.js'
import { STATE_CODE } from '../policies/naming.js'

const PACKED = new WeakMap<PolicySet, string | false>()

/**
 * The namespace of a set's one state key, or undefined when each policy keeps its own key. A set
 * of 2 or more policies, each GCRA that does not wait (or token-bucket, leaky-bucket) or
 * fixed-window, keeps them all in one key, read and written once per decision:
 * its first policy's namespace, then `+` and each other policy's `name:code:`
 * (`rl:second:gc:+day:fw:`), so sets of other policies never share it.
 */
export function packedNamespace(set: PolicySet): string | undefined {
  let namespace = PACKED.get(set)
  if (namespace === undefined) {
    const { policies } = set
    const packs = policies.length > 1 && policies.every(packable)
    namespace = packs
      ? `${set.namespaces[0]}+${policies
          .slice(1)
          .map((p) => `${p.name}:${STATE_CODE[p.algorithm]}:`)
          .join('')}`
      : false
    PACKED.set(set, namespace)
  }
  return namespace === false ? undefined : namespace
}

function packable(policy: PolicySet['policies'][number]): boolean {
  const code = STATE_CODE[policy.algorithm]
  return (code === 'gc' && policy.waitUnits === undefined) || code === 'fw'
}
