// The line of acquire's waiters for a concurrency slot, per key: woken first in, first out (by
// class first, where a fleet reserve makes the class matter), one per slot a release in this
// process frees; the head of the line polls the store for slots freed by other processes, with
// backoff.

// The head of a key's line asks the store again after FIRST_POLL_MS, doubling up to MAX_POLL_MS
// while it is refused (a release in another process is seen at its next poll).
const FIRST_POLL_MS = 5
const MAX_POLL_MS = 250

/** Called when a waiter's turn comes; `polled`: by the line's poll rather than a release. */
export type Wake = (polled: boolean) => void

interface Waiter {
  /** Its class's place in the line: a lower rank goes first (see {@link Wakers.add}). */
  readonly rank: number
  /** Its place in the order callers came in: within a rank, the line is kept in this order. */
  readonly seq: number
  readonly wake: Wake
}

// Whether `a` waits behind `b`: a higher rank (a lower class), or the same one and came later.
function behind(a: Waiter, b: Waiter): boolean {
  return a.rank > b.rank || (a.rank === b.rank && a.seq > b.seq)
}

interface Line {
  readonly waiting: Waiter[]
  /** Woken waiters whose ask to the store is not answered yet. */
  asking: number
  /** The poll's ask is out: a release meanwhile is owed to the head, whatever it hears. */
  polling: boolean
  /** Slots freed while the poll's ask was out: woken once its waiter is back in line. */
  owed: number
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
  readonly #firstAsks = new Map<string, number>()
  #arrivals = 0

  /** A caller's place in the order of arrival (see {@link Wakers.add}). */
  arrive(): number {
    return this.#arrivals++
  }

  /**
   * Whether a newcomer for `key` queues without asking the store: callers wait (or were woken
   * and are asking), or as many callers as the key has `slots` are asking for the first time.
   */
  busy(key: string, slots: number): boolean {
    return this.#lines.has(key) || (this.#firstAsks.get(key) ?? 0) >= slots
  }

  /** A caller asks for `key` for the first time; returns what to call when it hears back. */
  firstAsk(key: string): () => void {
    this.#firstAsks.set(key, (this.#firstAsks.get(key) ?? 0) + 1)
    let out = true
    return () => {
      if (!out) return
      out = false
      const left = (this.#firstAsks.get(key) ?? 1) - 1
      if (left > 0) this.#firstAsks.set(key, left)
      else this.#firstAsks.delete(key)
    }
  }

  /**
   * Waits in `key`'s line, by `rank` (lower first), then in order of arrival (`seq`, from
   * {@link Wakers.arrive}): behind those who came before, so a woken waiter that lost the slot
   * to another process is back at the head of its class, and replies that come back out of
   * order do not reorder the line. A limiter with a fleet reserve passes the caller's priority
   * rank, so a slot only a higher class may take is offered to that class first (a lower-class
   * head, refused by the reserve, would keep it waiting); others pass one rank for all. Returns
   * how to leave the line (a deadline or an abort).
   */
  add(key: string, seq: number, wake: Wake, rank = 0): () => void {
    let line = this.#lines.get(key)
    if (line === undefined) {
      line = {
        waiting: [],
        asking: 0,
        polling: false,
        owed: 0,
        pollMs: FIRST_POLL_MS,
        timer: undefined,
      }
      this.#lines.set(key, line)
    }
    const waiter = { rank, seq, wake }
    const { waiting } = line
    let at = waiting.length
    while (at > 0 && behind(waiting[at - 1] as Waiter, waiter)) at--
    waiting.splice(at, 0, waiter)
    this.#arm(key, line)
    const joined = line
    return () => {
      const index = joined.waiting.indexOf(waiter)
      if (index >= 0) joined.waiting.splice(index, 1)
      this.#tidy(key, joined)
    }
  }

  /**
   * A woken waiter's ask is answered (refused, it is back at the head of the line already, if
   * it waits on). Admitted with `free` slots left, it wakes that many more (less those already
   * woken and asking); admitted after a poll, the poll starts over. Refused after a poll, the
   * slots released meanwhile are woken now.
   */
  asked(key: string, admitted: boolean, polled: boolean, free: number): void {
    const line = this.#lines.get(key)
    if (line === undefined) return
    line.asking = Math.max(0, line.asking - 1)
    if (polled) line.polling = false
    if (admitted) {
      // what it leaves free counts any release meanwhile: nothing else is owed
      line.owed = 0
      if (polled) line.pollMs = FIRST_POLL_MS
      this.#wakeFirst(line, free - line.asking, false)
    }
    this.#payOwed(line)
    this.#tidy(key, line)
    if (this.#lines.get(key) === line) this.#arm(key, line)
  }

  /** A release or refund in this process freed `slots`: wakes that many waiters, first in first. */
  wake(key: string, slots = 1): void {
    const line = this.#lines.get(key)
    if (line === undefined) return
    // the polled head asked before this slot came free: it is owed the slot, not the next one
    if (line.polling) line.owed += slots
    else this.#wakeFirst(line, slots, false)
  }

  // Slots freed while the poll's ask was out, once its waiter is back at the head (or gone).
  #payOwed(line: Line): void {
    if (line.polling || line.owed === 0) return
    const owed = line.owed
    line.owed = 0
    this.#wakeFirst(line, owed, false)
  }

  #wakeFirst(line: Line, count: number, polled: boolean): void {
    for (let i = 0; i < count; i++) {
      const waiter = line.waiting.shift()
      if (waiter === undefined) return
      line.asking++
      waiter.wake(polled)
    }
  }

  // One poll timer per line while someone waits in it; it wakes the head only when no woken
  // waiter is asking (that one's answer says more than a poll would).
  #arm(key: string, line: Line): void {
    if (line.timer !== undefined || line.waiting.length === 0) return
    line.timer = setTimeout(() => {
      line.timer = undefined
      line.pollMs = Math.min(MAX_POLL_MS, line.pollMs * 2)
      this.#payOwed(line)
      if (line.asking === 0 && line.waiting.length > 0) {
        line.polling = true
        this.#wakeFirst(line, 1, true)
      }
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
