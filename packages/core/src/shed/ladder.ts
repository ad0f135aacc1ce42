// The ramp: how much of each priority class a shedder refuses. Pure state, stepped once per
// interval.

/** What the signals said over one interval. */
export type Pressure =
  /** a signal is over its threshold */
  | 'over'
  /** a signal is over twice its threshold (ELU cannot be): the rise takes a whole class */
  | 'far'
  /** none over, but one is in the recovery band just under its threshold: hold */
  | 'band'
  /** every signal is under the recovery band */
  | 'under'

/**
 * The shed level counts in `units`, `steps` per class, over the classes that have traffic, from
 * the least important up: with `steps` 4, 6 units shed all of the lowest class and half of the
 * next. The first interval over sheds one unit; each further rise needs two intervals over in a
 * row (the first may be the backlog of what was just shed still draining), and is twice the last
 * while the signal stays over, never past the next class's boundary in one rise; a signal over
 * twice its threshold (a queue that grows) takes the rest of the class at once. It goes down a
 * unit only after `recovery` intervals in a row under the recovery band; an interval in the band
 * holds it. So a signal hovering at its threshold neither sheds more (ratchets) nor flaps a class
 * in and out.
 *
 * Near the level the service can take, a unit can be too coarse: with 20% critical at four times
 * capacity, a twentieth of low is 16% of capacity, and the ladder would swing between all of low
 * shed (under the band) and one unit less (over). So the step is fine-tuned where the direction
 * turns: a rise right after a fall (the fall overshot) takes back half that fall, and the fall
 * after such a correction is half the correction, down to the finest step (a power of two
 * about `steps` times smaller than a unit: a twentieth of low is then cut in 32). Falls in a row
 * double the step back, up to one unit; rises in a row double as before; at level 0 the step is
 * a unit again. With `steps` 1 the finest step is the unit: whole classes, as before.
 *
 * Only classes with traffic hold places on the ladder: shedding a class nobody asks in relieves
 * nothing, and walking back down through it would keep the classes below it shed for nothing. A
 * class joins when its first request comes, admitted (below the classes it is less important
 * than: the shed units move down onto it), and leaves when it has asked nothing for `window`
 * intervals while admitted in full. Rank 0 (critical) is never shed.
 */
export class Ladder {
  /** Shed units, `steps` per class. */
  units = 0
  /** Intervals in a row under the recovery band, since the last change. */
  quiet = 0
  /** A closed ladder sheds nothing. */
  closed = false
  readonly #recovery: number
  readonly #steps: number
  // intervals over in a row since the last rise, and the next rise's size in units
  #overs = 0
  #stride = 0
  // the step where the direction turns, in units (a unit down to `#finest`), the last move, and
  // whether it was a rise taking back part of a fall
  #fine = 1
  readonly #finest: number
  #last: 'up' | 'down' | undefined
  #corrected = false
  // of the last fall, the units a correction has yet to take back (its rises do not double)
  #undo = 0
  // the ranks seen in the last `#window` intervals, ascending, and the interval each was last seen
  #ranks: number[] = []
  readonly #lastSeen = new Map<number, number>()
  readonly #window: number
  #interval = 0
  // per rank, the share of a request owed to shedding: partly shed classes shed every n-th
  readonly #owed = new Map<number, number>()

  constructor(recovery: number, steps = 1, window = Math.max(10, 2 * recovery)) {
    this.#recovery = recovery
    this.#steps = steps
    this.#window = window
    // a power of two, so sums of steps stay exact
    this.#finest = 2 ** -Math.ceil(Math.log2(steps))
  }

  /** Learns that a request asked with `rank` this interval, so the ramp steps through it. */
  see(rank: number): void {
    if (rank === 0) return
    const last = this.#lastSeen.get(rank)
    if (last === this.#interval) return
    this.#lastSeen.set(rank, this.#interval)
    if (last === undefined) this.#regroup([...this.#ranks, rank].sort((a, b) => a - b))
  }

  // Moves the ladder onto `ranks`, keeping the sum of the shed units: a new class starts
  // admitted, and when it is the least important, the units move down onto it.
  #regroup(ranks: number[]): void {
    let units = 0
    for (const rank of ranks) if (this.#ranks.includes(rank)) units += this.#unitsOf(rank)
    this.#ranks = ranks
    this.units = units
  }

  // Forgets the admitted classes not seen in the last `#window` intervals. A shed class stays
  // while its clients wait out their Retry-After, and comes back as the ladder walks down.
  #forget(): void {
    const since = this.#interval - this.#window
    const stale = this.#ranks.filter(
      (rank) => (this.#lastSeen.get(rank) ?? since) <= since && this.#unitsOf(rank) === 0,
    )
    if (stale.length === 0) return
    for (const rank of stale) {
      this.#lastSeen.delete(rank)
      this.#owed.delete(rank)
    }
    this.#regroup(this.#ranks.filter((rank) => !stale.includes(rank)))
  }

  // The units of `rank`'s own class shed now, 0 to `steps` (0 for a rank not on the ladder).
  #unitsOf(rank: number): number {
    const at = this.#ranks.indexOf(rank)
    if (at < 0) return 0
    const fromBottom = this.#ranks.length - 1 - at
    return Math.min(this.#steps, Math.max(0, this.units - fromBottom * this.#steps))
  }

  /** One interval passed. Returns whether the level rose (`'up'`), fell (`'down'`) or not. */
  step(pressure: Pressure): 'up' | 'down' | undefined {
    if (this.closed) return undefined
    this.#interval++
    this.#forget()
    if (pressure !== 'under') this.quiet = 0
    if (pressure === 'over' || pressure === 'far') return this.#rise(pressure === 'far')
    this.#overs = 0
    this.#stride = 0
    if (pressure === 'band' || this.units === 0) return undefined
    if (++this.quiet < this.#recovery) return undefined
    this.quiet = 0
    return this.#fall()
  }

  #fall(): 'down' {
    // after a correction, half of it; after a fall, twice that fall, up to a unit
    if (this.#last === 'up' && this.#corrected) this.#fine = Math.max(this.#finest, this.#fine / 2)
    else if (this.#last === 'down') this.#fine = Math.min(1, this.#fine * 2)
    this.#undo = Math.min(this.units, this.#fine)
    this.units -= this.#undo
    this.#move(this.units === 0 ? undefined : 'down')
    return 'down'
  }

  #rise(far: boolean): 'up' | undefined {
    const max = this.#ranks.length * this.#steps
    // the first rise at once; each further one after two intervals over in a row
    if (++this.#overs < (this.units === 0 ? 1 : 2) || this.units >= max) return undefined
    this.#overs = 0
    // the first rise of a run: right after a fall, half that fall back (a correction)
    if (this.#stride === 0) {
      this.#corrected = this.#last === 'down'
      if (this.#corrected) this.#fine = Math.max(this.#finest, this.#fine / 2)
      else this.#undo = 0
      this.#stride = this.#fine
    }
    const boundary = (Math.floor(this.units / this.#steps) + 1) * this.#steps
    this.units = far ? boundary : Math.min(this.units + this.#stride, boundary)
    this.#undo -= this.#stride
    if (this.#undo <= 0) this.#stride *= 2
    this.#move('up')
    return 'up'
  }

  // Records a move; back at level 0, the step is a unit again.
  #move(last: 'up' | 'down' | undefined): void {
    this.#last = last
    if (last === undefined) {
      this.#fine = 1
      this.#corrected = false
    }
  }

  /** The share of `rank` shed now, 0 to 1. */
  share(rank: number): number {
    if (rank === 0 || this.closed) return 0
    return this.#unitsOf(rank) / this.#steps
  }

  /** Whether to shed this request of `rank`: a partly shed class sheds evenly spread requests. */
  sheds(rank: number): boolean {
    if (rank === 0 || this.closed) return false
    // the class's shed units, in whole units so the spread is exact
    const units = this.#unitsOf(rank)
    if (units >= this.#steps) return true
    if (units <= 0) return false
    // units are sums of powers of two: exact
    const owed = (this.#owed.get(rank) ?? 0) + units
    const shed = owed >= this.#steps
    this.#owed.set(rank, shed ? owed - this.#steps : owed)
    return shed
  }

  /** Intervals until `rank` is admitted in full if every signal stays under from now on. */
  intervalsUntilAdmitted(rank: number): number {
    const at = this.#ranks.indexOf(rank)
    // the units above this class's bottom: every one comes off before it is admitted in full
    const units = this.units - (this.#ranks.length - 1 - at) * this.#steps
    return Math.max(1, Math.ceil(units) * this.#recovery - this.quiet)
  }

  /** The ranks shed now (in full or in part), most important first. */
  shed(): number[] {
    return this.#ranks.filter((r) => this.share(r) > 0)
  }

  /**
   * Classes shed, counted from the least important class with traffic: 1.5 is all of one and
   * half the next.
   */
  level(): number {
    return this.closed ? 0 : this.units / this.#steps
  }
}
