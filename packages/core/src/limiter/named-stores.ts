// The MemoryStore of a limiter given a `name` and no store: one per name (`prefix + name`) in the
// process, so limiters that share a name share counters in memory as they do on Redis. A limiter
// without a name (its name derived from its numbers) keeps a MemoryStore of its own, as before: a
// fresh limiter starts empty, and a flood of keys on one never evicts another's.
import { MemoryStore } from '../stores/memory-store.js'

// Names are the code's, not the clients': one entry per name a process uses. (A MemoryStore's
// sweep timer keeps it alive anyway, so a weak reference would not let one go.)
const stores = new Map<string, MemoryStore>()

/** The process's MemoryStore for limiters named `name` under `prefix`. */
export function namedStore(prefix: string, name: string): MemoryStore {
  const id = `${prefix}${name}`
  let store = stores.get(id)
  if (store === undefined) {
    store = new MemoryStore()
    stores.set(id, store)
  }
  return store
}
