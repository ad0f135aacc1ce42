// The line of acquire's waiters for a concurrency slot, per key: woken first in, first out, one
// per slot a release in this process frees; the head of the line polls the store for slots freed
// by other processes, with backoff.

// The head of a key's line asks the store again after FIRST_POLL_MS, doubling up to MAX_POLL_MS
// while it is refused (a release in another process is seen at its next poll).
export const FIRST_POLL_MS = 5
export const MAX_POLL_MS = 250

/** Called when a waiter's turn comes; `polled`: by the line's poll rather than a release. */
export type Wake = (polled: boolean) => void

interface Line {
  readonly waiting: Wake[]
  /** Woken waiters whose ask to the store is not answered yet. */
  asking: number
  pollMs: number
  timer: ReturnType<typeof setTimeout> | undefined
}

/**
 * The waiters of one limiter, by key. One store ask per wake: a release wakes the head of its
 * key's line, an admission that leaves slots free wakes as many more, and one timer per line
 * (not one per waiter) polls for slots other processes free.
 */
export class Wakers {
  readonly #lines = new Map<string, Line>()

  /** Whether callers for `key` wait (or were woken and are asking): a newcomer queues behind. */
  busy(key: string): boolean {
    return this.#lines.has(key)
  }

  /**
   * Waits in `key`'s line: at the tail, or at the head for a woken waiter that lost the slot
   * to another process. Returns how to leave the line (a deadline or an abort).
   */
  add(key: string, wake: Wake, atHead: boolean): () => void {
    let line = this.#lines.get(key)
    if (line === undefined) {
      line = { waiting: [], asking: 0, pollMs: FIRST_POLL_MS, timer: undefined }
      this.#lines.set(key, line)
    }
    if (atHead) line.waiting.unshift(wake)
    else line.waiting.push(wake)
    this.#arm(key, line)
    const joined = line
    return () => {
      const at = joined.waiting.indexOf(wake)
      if (at >= 0) joined.waiting.splice(at, 1)
      this.#tidy(key, joined)
    }
  }

  /**
   * A woken waiter's ask is answered. Admitted with `free` slots left, it wakes that many
   * more (less those already woken and asking); admitted after a poll, the poll starts over.
   */
  asked(key: string, admitted: boolean, polled: boolean, free: number): void {
    const line = this.#lines.get(key)
    if (line === undefined) return
    line.asking = Math.max(0, line.asking - 1)
    if (admitted) {
      if (polled) line.pollMs = FIRST_POLL_MS
      this.#wakeFirst(line, free - line.asking, false)
    }
    this.#tidy(key, line)
    if (this.#lines.get(key) === line) this.#arm(key, line)
  }

  /** A release or refund in this process freed `slots`: wakes that many waiters, first in first. */
  wake(key: string, slots = 1): void {
    const line = this.#lines.get(key)
    if (line === undefined) return
    this.#wakeFirst(line, slots, false)
  }

  #wakeFirst(line: Line, count: number, polled: boolean): void {
    for (let i = 0; i < count; i++) {
      const wake = line.waiting.shift()
      if (wake === undefined) return
      line.asking++
      wake(polled)
    }
  }

  // One poll timer per line while someone waits in it and none is asking.
  #arm(key: string, line: Line): void {
    if (line.timer !== undefined || line.waiting.length === 0) return
    line.timer = setTimeout(() => {
      line.timer = undefined
      line.pollMs = Math.min(MAX_POLL_MS, line.pollMs * 2)
      if (line.asking === 0) this.#wakeFirst(line, 1, true)
      this.#arm(key, line)
    }, line.pollMs)
    // each waiter's own deadline timer keeps the process alive, not the poll
    line.timer.unref?.()
  }

  #tidy(key: string, line: Line): void {
    if (line.waiting.length > 0 || line.asking > 0) return
    clearTimeout(line.timer)
    line.timer = undefined
    if (this.#lines.get(key) === line) this.#lines.delete(key)
  }
}
