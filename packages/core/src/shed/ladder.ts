// The ramp: which priority classes a shedder refuses. Pure state, stepped once per interval.

/**
 * Sheds the lowest class still admitted for each interval a signal is over, and admits the
 * highest class shed again only after `recovery` intervals in a row with every signal under:
 * one class per quiet period, so a signal hovering at its threshold never readmits a class.
 * Rank 0 (critical) is never shed.
 */
export class Ladder {
  /** Requests of this rank or lower (numerically higher) are shed; Infinity sheds none. */
  cutoff = Number.POSITIVE_INFINITY
  /** Intervals in a row with every signal under, since the last change or the last over. */
  quiet = 0
  readonly #recovery: number
  // every rank seen (the named classes from the start), ascending
  #ranks: number[] = [1, 2, 3]

  constructor(recovery: number) {
    this.#recovery = recovery
  }

  /** Learns a rank a request asked with, so the ramp steps through it. */
  see(rank: number): void {
    if (rank === 0 || this.#ranks.includes(rank)) return
    this.#ranks.push(rank)
    this.#ranks.sort((a, b) => a - b)
  }

  /** One interval passed, with a signal over (`true`) or all under. Returns whether it changed. */
  step(over: boolean): boolean {
    if (over) {
      this.quiet = 0
      let next = -1
      for (const r of this.#ranks) if (r < this.cutoff) next = r
      if (next === -1) return false
      this.cutoff = next
      return true
    }
    if (this.cutoff === Number.POSITIVE_INFINITY) return false
    if (++this.quiet < this.#recovery) return false
    this.quiet = 0
    this.cutoff = this.#ranks.find((r) => r > this.cutoff) ?? Number.POSITIVE_INFINITY
    return true
  }

  /** `rank` is shed now. */
  sheds(rank: number): boolean {
    return rank !== 0 && rank >= this.cutoff
  }

  /** Intervals until `rank` is admitted again if every signal stays under from now on. */
  intervalsUntilAdmitted(rank: number): number {
    const classes = this.#ranks.filter((r) => r >= this.cutoff && r <= rank).length
    return Math.max(1, classes * this.#recovery - this.quiet)
  }

  /** The ranks shed now, most important first. */
  shed(): number[] {
    return this.#ranks.filter((r) => r >= this.cutoff)
  }
}
