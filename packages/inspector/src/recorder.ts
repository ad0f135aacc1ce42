// What the page shows, recorded from the limiters' decisions (told directly by each limiter, see
// observeDecisions) and their diagnostics channels: per policy, a ring of per-second counters
// over 15 minutes and a Space-Saving summary of refused keys per minute; per limiter and failure
// domain, the circuit's last state. Memory is bounded: 900 seconds x 5 counters and 15 summaries
// of k keys per policy, whatever the traffic.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import {
  CIRCUIT_CHANNEL,
  type CircuitEvent,
  DECISION_CHANNEL,
  type Decision,
  type DecisionEvent,
  FAILURE_CHANNEL,
  type FailureEvent,
  type Limiter,
  observeDecisions,
} from '@limiter/core'
import { boundedKey, isKeyDigest } from '@limiter/core/http'
import { SpaceSaving } from './space-saving.js'

export const SECONDS = 900
export const MINUTES = 15
/** The counters of one second, in this order. */
export const SERIES = ['allowed', 'refused', 'shadow', 'failOpen', 'storeErrors'] as const
export type SeriesName = (typeof SERIES)[number]

const ALLOWED = 0
const REFUSED = 1
const SHADOW = 2
const FAIL_OPEN = 3
const STORE_ERRORS = 4

/** One policy's recordings. */
export class PolicyRecord {
  readonly id: string
  readonly counts = new Uint32Array(SECONDS * SERIES.length)
  readonly seconds = new Float64Array(SECONDS).fill(-1)
  readonly minutes: Array<{ minute: number; summary: SpaceSaving } | undefined> = new Array(
    MINUTES,
  ).fill(undefined)
  readonly #k: number
  /** Its limiter's allowed decisions not yet counted here (they are counted when read). */
  readonly #pending: AllowedTally | undefined

  constructor(id: string, k: number, pending?: AllowedTally) {
    this.id = id
    this.#k = k
    this.#pending = pending
  }

  count(series: number, nowMs: number): void {
    this.add(series, Math.floor(nowMs / 1000), 1)
  }

  /** Counts `n` decisions of `series` in `second` (none in a second older than its slot's). */
  add(series: number, second: number, n: number): void {
    const slot = second % SECONDS
    const held = this.seconds[slot] as number
    if (held > second) return // 15 minutes late: that second is gone
    if (held !== second) {
      this.seconds[slot] = second
      this.counts.fill(0, slot * SERIES.length, (slot + 1) * SERIES.length)
    }
    this.counts[slot * SERIES.length + series] =
      (this.counts[slot * SERIES.length + series] ?? 0) + n
  }

  /** Counts what its limiter allowed and this record has not counted yet: before reading it. */
  settle(): void {
    this.#pending?.fold()
  }

  refusedKey(key: string, nowMs: number): void {
    const minute = Math.floor(nowMs / 60_000)
    const slot = minute % MINUTES
    let bucket = this.minutes[slot]
    if (bucket === undefined || bucket.minute !== minute) {
      bucket = { minute, summary: new SpaceSaving(this.#k) }
      this.minutes[slot] = bucket
    }
    bucket.summary.add(key)
  }

  /** The summary of `minute`, if that minute is still held. */
  summaryOf(minute: number): SpaceSaving | undefined {
    const bucket = this.minutes[minute % MINUTES]
    return bucket !== undefined && bucket.minute === minute ? bucket.summary : undefined
  }

  /** `SECONDS / step` points per series, oldest first: the mean per second over each step. */
  rates(nowMs: number, stepSeconds: number): number[][] {
    this.settle()
    const last = Math.floor(nowMs / 1000)
    const first = last - SECONDS + 1
    const points = SECONDS / stepSeconds
    const out = SERIES.map(() => new Array<number>(points).fill(0))
    for (let second = first; second <= last; second++) {
      const slot = second % SECONDS
      if (this.seconds[slot] !== second) continue
      const point = Math.floor((second - first) / stepSeconds)
      SERIES.forEach((_, s) => {
        const series = out[s] as number[]
        series[point] = (series[point] ?? 0) + (this.counts[slot * SERIES.length + s] ?? 0)
      })
    }
    return out.map((series) => series.map((total) => total / stepSeconds))
  }
}

/** A circuit's last reported state. */
export interface CircuitState {
  readonly limiter: string
  readonly domain: string
  readonly state: 'open' | 'closed'
  readonly sinceMs: number
}

/**
 * One limiter's allowed decisions of one second, counted as one integer and added to each of its
 * policies' records when the second changes or the records are read: an allowed decision counts
 * in every policy, and counting it here once spares a ring update per policy per decision.
 */
export class AllowedTally {
  readonly records: PolicyRecord[] = []
  #second = 0
  // the second's bounds, in ms: none at first, so the first decision starts one
  #fromMs = 0
  #toMs = 0
  #n = 0

  /** An allowed decision made at `atMs`. */
  add(atMs: number): void {
    if (atMs < this.#fromMs || atMs >= this.#toMs) this.#start(Math.floor(atMs / 1000))
    this.#n++
  }

  /** Adds the decisions counted so far to the records. */
  fold(): void {
    const n = this.#n
    if (n === 0) return
    this.#n = 0
    for (const record of this.records) record.add(ALLOWED, this.#second, n)
  }

  #start(second: number): void {
    this.fold()
    this.#second = second
    this.#fromMs = second * 1000
    this.#toMs = this.#fromMs + 1000
  }
}

/** A limiter's recordings: its policies' records, and its allowed decisions not yet in them. */
interface Recording {
  readonly records: PolicyRecord[]
  readonly tally: AllowedTally
}

// One decision into a limiter's recordings. A peek is not traffic (the page's own, or an app's);
// an allowed decision goes to the tally; a refusal is charged to the policies that refused it.
// A refused key as the summaries keep it: at most ~200 bytes, whatever a client sends. A longer
// one is its digest (core's boundedKey: what RedisStore names it by); any other, itself (not
// escaped, as boundedKey escapes one that starts with NUL).
function keptKey(key: string): string {
  const held = boundedKey(key)
  return held === key || isKeyDigest(held) ? held : key
}

function record(
  { records, tally }: Recording,
  key: string,
  cost: number,
  decision: Decision,
  atMs: number,
  shadow: boolean,
): void {
  if (cost === 0) return
  // the common decision first: allowed by the store, one increment
  if (decision.allowed && decision.source !== 'fail-open') {
    tally.add(atMs)
    return
  }
  if (decision.source === 'fail-open') {
    for (const record of records) record.count(FAIL_OPEN, atMs)
    return
  }
  // All or nothing: a refusal counted nothing; it is charged to the policies that refused.
  records.forEach((record, i) => {
    if (decision.policies[i]?.allowed !== false) return
    record.count(shadow ? SHADOW : REFUSED, atMs)
    record.refusedKey(keptKey(key), atMs)
  })
}

/**
 * The recordings of every registered limiter's policies. Each limiter tells its decisions to
 * the recorder directly (`observeDecisions`: no event object, no channel); one that cannot (not
 * made by this core's `createLimiter`) is heard on `limiter:decision` instead.
 */
export class Recorder {
  readonly policies = new Map<Limiter, PolicyRecord[]>()
  readonly circuits = new Map<string, CircuitState>()
  readonly #now: () => number
  readonly #recordings = new Map<Limiter, Recording>()
  // the limiters heard on limiter:decision, while started
  readonly #heard = new Map<Limiter, Recording>()
  readonly #unobserve: Array<() => void> = []

  constructor(limiters: readonly Limiter[], k: number, now: () => number) {
    this.#now = now
    for (const limiter of limiters) {
      const tally = new AllowedTally()
      const records = limiter.policies.map(
        (p) => new PolicyRecord(policyId(limiter, p.name), k, tally),
      )
      tally.records.push(...records)
      this.policies.set(limiter, records)
      this.#recordings.set(limiter, { records, tally })
    }
  }

  readonly #onDecision = (message: unknown): void => {
    const event = message as DecisionEvent
    const recording = this.#heard.get(event.limiter)
    if (recording === undefined) return
    // the decision's own time, when the limiter gives it: no clock read per decision
    const atMs = event.atMs ?? this.#now()
    record(recording, event.key, event.cost, event.decision, atMs, event.shadow)
  }

  readonly #onFailure = (message: unknown): void => {
    const event = message as FailureEvent
    const records = this.policies.get(event.limiter)
    if (records === undefined) return
    const nowMs = this.#now()
    for (const record of records) record.count(STORE_ERRORS, nowMs)
  }

  readonly #onCircuit = (message: unknown): void => {
    const event = message as CircuitEvent
    if (!this.policies.has(event.limiter)) return
    const name = event.limiter.name
    this.circuits.set(`${name}\u0000${event.domain}`, {
      limiter: name,
      domain: event.domain,
      state: event.state,
      sinceMs: this.#now(),
    })
  }

  start(): void {
    for (const [limiter, recording] of this.#recordings) {
      const shadow = limiter.mode === 'shadow'
      const stop = observeDecisions(limiter, (key, cost, decision, atMs) =>
        record(recording, key, cost, decision, atMs, shadow),
      )
      if (stop === undefined) this.#heard.set(limiter, recording)
      else this.#unobserve.push(stop)
    }
    if (this.#heard.size > 0) subscribe(DECISION_CHANNEL, this.#onDecision)
    subscribe(FAILURE_CHANNEL, this.#onFailure)
    subscribe(CIRCUIT_CHANNEL, this.#onCircuit)
  }

  /** Stops recording, and counts what was not counted yet. */
  stop(): void {
    for (const stop of this.#unobserve.splice(0)) stop()
    if (this.#heard.size > 0) unsubscribe(DECISION_CHANNEL, this.#onDecision)
    this.#heard.clear()
    unsubscribe(FAILURE_CHANNEL, this.#onFailure)
    unsubscribe(CIRCUIT_CHANNEL, this.#onCircuit)
    for (const { tally } of this.#recordings.values()) tally.fold()
  }
}

/** A policy's id on the page and in Redis: the limiter's name and the policy's. */
export function policyId(limiter: Limiter, policyName: string): string {
  return `${limiter.name}/${policyName}`
}
