// One at a time per limiter and key: the asks of acquire's callers that may give their
// reservation back (see acquire.ts), each with its give-back, in the order they came.

const chains = new WeakMap<object, Map<string, Promise<void>>>()

const settled = (): void => undefined

/**
 * Runs `step` once the steps before it for `owner` and `key` have settled (whether they resolved
 * or rejected), and resolves or rejects as it does. A key's entry is removed once its last step
 * has settled, so the map holds only keys with steps under way.
 */
export function inTurn<T>(owner: object, key: string, step: () => Promise<T>): Promise<T> {
  let keys = chains.get(owner)
  if (keys === undefined) {
    keys = new Map()
    chains.set(owner, keys)
  }
  const before = keys.get(key)
  const result = before === undefined ? step() : before.then(step)
  const tail = result.then(settled, settled)
  keys.set(key, tail)
  const own = keys
  void tail.then(() => {
    if (own.get(key) === tail) own.delete(key)
  })
  return result
}
