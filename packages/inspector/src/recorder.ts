// What the page shows, recorded from the limiters' diagnostics channels: per policy, a ring of
// per-second counters over 15 minutes and a Space-Saving summary of refused keys per minute;
// per limiter and failure domain, the circuit's last state. Memory is bounded: 900 seconds x 5
// counters and 15 summaries of k keys per policy, whatever the traffic.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import {
  CIRCUIT_CHANNEL,
  type CircuitEvent,
  DECISION_CHANNEL,
  type DecisionEvent,
  FAILURE_CHANNEL,
  type FailureEvent,
  type Limiter,
} from '@limiter/core'
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

  constructor(id: string, k: number) {
    this.id = id
    this.#k = k
  }

  count(series: number, nowMs: number): void {
    const second = Math.floor(nowMs / 1000)
    const slot = second % SECONDS
    if (this.seconds[slot] !== second) {
      this.seconds[slot] = second
      this.counts.fill(0, slot * SERIES.length, (slot + 1) * SERIES.length)
    }
    this.counts[slot * SERIES.length + series] =
      (this.counts[slot * SERIES.length + series] ?? 0) + 1
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

/** The recordings of every registered limiter's policies. */
export class Recorder {
  readonly policies = new Map<Limiter, PolicyRecord[]>()
  readonly circuits = new Map<string, CircuitState>()
  readonly #now: () => number

  constructor(limiters: readonly Limiter[], k: number, now: () => number) {
    this.#now = now
    for (const limiter of limiters) {
      this.policies.set(
        limiter,
        limiter.policies.map((p) => new PolicyRecord(policyId(limiter, p.name), k)),
      )
    }
  }

  readonly #onDecision = (message: unknown): void => {
    const event = message as DecisionEvent
    if (event.cost === 0) return // a peek: the page's own, or an app's; not traffic
    const records = this.policies.get(event.limiter)
    if (records === undefined) return
    // the decision's own time, when the limiter gives it: no clock read per decision
    const nowMs = event.atMs ?? this.#now()
    const { decision } = event
    if (decision.source === 'fail-open') {
      for (const record of records) record.count(FAIL_OPEN, nowMs)
      return
    }
    if (decision.allowed) {
      for (const record of records) record.count(ALLOWED, nowMs)
      return
    }
    // All or nothing: a refusal counted nothing; it is charged to the policies that refused.
    records.forEach((record, i) => {
      if (decision.policies[i]?.allowed !== false) return
      record.count(event.shadow ? SHADOW : REFUSED, nowMs)
      record.refusedKey(event.key, nowMs)
    })
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
    subscribe(DECISION_CHANNEL, this.#onDecision)
    subscribe(FAILURE_CHANNEL, this.#onFailure)
    subscribe(CIRCUIT_CHANNEL, this.#onCircuit)
  }

  stop(): void {
    unsubscribe(DECISION_CHANNEL, this.#onDecision)
    unsubscribe(FAILURE_CHANNEL, this.#onFailure)
    unsubscribe(CIRCUIT_CHANNEL, this.#onCircuit)
  }
}

/** A policy's id on the page and in Redis: the limiter's name and the policy's. */
export function policyId(limiter: Limiter, policyName: string): string {
  return `${limiter.name}/${policyName}`
}
