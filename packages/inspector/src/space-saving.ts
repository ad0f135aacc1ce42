// Space-Saving (Metwally, Agrawal, El Abbadi 2005): the heaviest keys of a stream in k counters.
// A key seen but not tracked takes the place of the smallest counter and inherits its count as
// its error, so every count is an overestimate by at most N/k (N the stream's length), and every
// key seen more than N/k times is tracked. A min-heap keeps the eviction O(log k).

/** One tracked key: `count` overestimates its true count by at most `error`. */
export interface HeavyHitter {
  readonly key: string
  readonly count: number
  readonly error: number
}

/** A summary as plain data, to send to Redis and merge: `n` items seen, `min` its smallest count when full. */
export interface SummaryData {
  readonly n: number
  readonly k: number
  readonly items: readonly HeavyHitter[]
}

interface Slot {
  key: string
  count: number
  error: number
  /** Its place in the heap. */
  at: number
}

/** The k heaviest keys of a stream, in k counters. */
export class SpaceSaving {
  readonly k: number
  #n = 0
  readonly #heap: Slot[] = []
  readonly #index = new Map<string, Slot>()

  constructor(k: number) {
    this.k = k
  }

  /** How many items were added. */
  get n(): number {
    return this.#n
  }

  /** How many keys are tracked (at most `k`). */
  get size(): number {
    return this.#heap.length
  }

  add(key: string, weight = 1): void {
    this.#n += weight
    const slot = this.#index.get(key)
    if (slot !== undefined) {
      slot.count += weight
      this.#down(slot.at)
      return
    }
    if (this.#heap.length < this.k) {
      const added = { key, count: weight, error: 0, at: this.#heap.length }
      this.#heap.push(added)
      this.#index.set(key, added)
      this.#up(added.at)
      return
    }
    const min = this.#heap[0] as Slot
    this.#index.delete(min.key)
    this.#index.set(key, min)
    min.key = key
    min.error = min.count
    min.count += weight
    this.#down(0)
  }

  /** The tracked keys, heaviest first. */
  top(limit = this.k): HeavyHitter[] {
    return [...this.#heap]
      .sort((a, b) => b.count - a.count)
      .slice(0, limit)
      .map(({ key, count, error }) => ({ key, count, error }))
  }

  data(): SummaryData {
    return { n: this.#n, k: this.k, items: this.top() }
  }

  #up(i: number): void {
    const heap = this.#heap
    while (i > 0) {
      const parent = (i - 1) >> 1
      if ((heap[parent] as Slot).count <= (heap[i] as Slot).count) return
      this.#swap(i, parent)
      i = parent
    }
  }

  #down(i: number): void {
    const heap = this.#heap
    for (;;) {
      const left = 2 * i + 1
      const right = left + 1
      let least = i
      if (left < heap.length && (heap[left] as Slot).count < (heap[least] as Slot).count)
        least = left
      if (right < heap.length && (heap[right] as Slot).count < (heap[least] as Slot).count)
        least = right
      if (least === i) return
      this.#swap(i, least)
      i = least
    }
  }

  #swap(a: number, b: number): void {
    const heap = this.#heap
    const slotA = heap[a] as Slot
    const slotB = heap[b] as Slot
    heap[a] = slotB
    heap[b] = slotA
    slotB.at = a
    slotA.at = b
  }
}

/**
 * Merges summaries (minutes, processes) into one list, heaviest first: a key missing from a full
 * summary may still have been seen there up to that summary's smallest count, which is added to
 * its count and error, so a merged count still overestimates by at most the sum of the N/k bounds.
 */
export function mergeSummaries(summaries: readonly SummaryData[], limit: number): HeavyHitter[] {
  const merged = new Map<string, { count: number; error: number; seen: Set<number> }>()
  summaries.forEach((summary, i) => {
    for (const item of summary.items) {
      const entry = merged.get(item.key) ?? { count: 0, error: 0, seen: new Set<number>() }
      entry.count += item.count
      entry.error += item.error
      entry.seen.add(i)
      merged.set(item.key, entry)
    }
  })
  const floors = summaries.map((s) =>
    s.items.length < s.k ? 0 : Math.min(...s.items.map((item) => item.count)),
  )
  const out: HeavyHitter[] = []
  for (const [key, entry] of merged) {
    let { count, error } = entry
    floors.forEach((floor, i) => {
      if (floor > 0 && !entry.seen.has(i)) {
        count += floor
        error += floor
      }
    })
    out.push({ key, count, error })
  }
  return out.sort((a, b) => b.count - a.count || a.key.localeCompare(b.key)).slice(0, limit)
}
