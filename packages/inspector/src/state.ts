// The page's data, as the JSON API answers it: every policy with its rates over 15 minutes and
// its top refused keys over 1, 5 and 15 minutes (merged across processes through Redis when one
// is given), and the circuits. Keys are labelled by `maskKey` before they leave this module.
import type { Limiter } from '@limiter/core'
import type { ResolvedOptions } from './options.js'
import { type PolicyRecord, type Recorder, SERIES, type SeriesName } from './recorder.js'
import { readSummaries, writeSummary } from './redis-sync.js'
import { type HeavyHitter, mergeSummaries, type SummaryData } from './space-saving.js'

/** How many seconds each chart point covers. */
export const STEP_SECONDS = 5
export const SPANS = [1, 5, 15] as const

export interface TopKey {
  readonly key: string
  readonly count: number
  readonly error: number
}

export interface PolicyState {
  readonly id: string
  readonly limiter: string
  readonly policy: string
  readonly algorithm: string
  readonly limit: number
  readonly windowMs: number
  readonly burst: number
  readonly mode: string
  /** Mean decisions per second per `STEP_SECONDS`, oldest first, over 15 minutes. */
  readonly rates: Record<SeriesName, number[]>
  /** Refused requests counted in the summaries per span (the N of the N/k bound). */
  readonly refused: Record<'1m' | '5m' | '15m', number>
  readonly top: Record<'1m' | '5m' | '15m', TopKey[]>
}

export interface InspectorState {
  readonly nowMs: number
  readonly stepSeconds: number
  readonly topK: number
  /** Top keys merged across processes through Redis (false: this process's only). */
  readonly merged: boolean
  readonly redisError?: string | undefined
  readonly policies: PolicyState[]
  readonly circuits: Array<{ limiter: string; domain: string; state: string; sinceMs: number }>
}

export interface SummarySource {
  /** Per span, the summaries to merge for `record` (several per minute with Redis). */
  summaries(record: PolicyRecord, minute: number): Promise<SummaryData[][]>
}

/** This process's summaries only. */
export function localSource(): SummarySource {
  return {
    async summaries(record, minute) {
      const perMinute: SummaryData[][] = []
      for (let m = 0; m < 15; m++) {
        const summary = record.summaryOf(minute - m)
        perMinute.push(summary === undefined ? [] : [summary.data()])
      }
      return perMinute
    },
  }
}

/** Writes this process's summaries of `minute` and the one before to Redis. */
export async function writeOwn(
  record: PolicyRecord,
  options: ResolvedOptions<unknown>,
  pid: string,
  minute: number,
): Promise<void> {
  const send = options.redis as NonNullable<typeof options.redis>
  for (const m of [minute, minute - 1]) {
    const own = record.summaryOf(m)
    if (own !== undefined)
      await writeSummary(send, options.redisPrefix, pid, record.id, m, own.data())
  }
}

/** Every process's summaries through Redis; this process writes its own first. */
export function redisSource(options: ResolvedOptions<unknown>, pid: string): SummarySource {
  const send = options.redis as NonNullable<typeof options.redis>
  return {
    async summaries(record, minute) {
      await writeOwn(record, options, pid, minute)
      const perMinute: SummaryData[][] = []
      for (let m = 0; m < 15; m++)
        perMinute.push(await readSummaries(send, options.redisPrefix, record.id, minute - m))
      return perMinute
    },
  }
}

/** Builds the state the page and the JSON API show. */
export async function buildState(
  recorder: Recorder,
  options: ResolvedOptions<unknown>,
  source: SummarySource,
  nowMs: number,
): Promise<InspectorState> {
  const minute = Math.floor(nowMs / 60_000)
  const policies: PolicyState[] = []
  let merged = options.redis !== undefined
  let redisError: string | undefined
  for (const [limiter, records] of recorder.policies) {
    for (const [i, record] of records.entries()) {
      let perMinute: SummaryData[][]
      try {
        perMinute = await source.summaries(record, minute)
      } catch (error) {
        merged = false
        redisError = error instanceof Error ? error.message : String(error)
        perMinute = await localSource().summaries(record, minute)
      }
      policies.push(policyState(limiter, i, record, perMinute, options, nowMs))
    }
  }
  const circuits = [...recorder.circuits.values()]
  return {
    nowMs,
    stepSeconds: STEP_SECONDS,
    topK: options.topK,
    merged,
    redisError,
    policies,
    circuits,
  }
}

function policyState(
  limiter: Limiter,
  i: number,
  record: PolicyRecord,
  perMinute: SummaryData[][],
  options: ResolvedOptions<unknown>,
  nowMs: number,
): PolicyState {
  const policy = limiter.policies[i] as Limiter['policies'][number]
  const series = record.rates(nowMs, STEP_SECONDS)
  const rates = Object.fromEntries(SERIES.map((name, s) => [name, series[s] ?? []])) as Record<
    SeriesName,
    number[]
  >
  const label = (hitter: HeavyHitter): TopKey => ({
    key: options.mask === undefined ? hitter.key : options.mask(hitter.key),
    count: hitter.count,
    error: hitter.error,
  })
  const spanOf = (minutes: number) => perMinute.slice(0, minutes).flat()
  const total = (minutes: number) => spanOf(minutes).reduce((sum, s) => sum + s.n, 0)
  const top = (minutes: number) => mergeSummaries(spanOf(minutes), 20).map(label)
  return {
    id: record.id,
    limiter: limiter.name,
    policy: policy.name,
    algorithm: policy.algorithm,
    limit: policy.limit,
    windowMs: policy.windowMs,
    burst: policy.burst,
    mode: limiter.mode,
    rates,
    refused: { '1m': total(1), '5m': total(5), '15m': total(15) },
    top: { '1m': top(1), '5m': top(5), '15m': top(15) },
  }
}

/**
 * The threshold preview: of the keys refused over the last 15 minutes (the merged summary), how
 * many a limit of `limit` per window would have refused, estimating each key's demand per window
 * as the current limit plus its refusals spread over the window. Changes nothing.
 */
export function previewThreshold(
  state: PolicyState,
  limit: number,
): { keys: number; of: number; refusedPerMinute: number } {
  const windowsPerQuarter = (15 * 60_000) / state.windowMs
  let keys = 0
  let refused = 0
  for (const hitter of state.top['15m']) {
    const demandPerWindow = state.limit + hitter.count / Math.max(1, windowsPerQuarter)
    if (demandPerWindow > limit) {
      keys++
      refused += (demandPerWindow - limit) * windowsPerQuarter
    }
  }
  return { keys, of: state.top['15m'].length, refusedPerMinute: refused / 15 }
}

/**
 * The raw key behind `label`: the one key of the last 15 minutes' summaries (any policy) that
 * `mask` labels so; `label` itself when none or several do, or when keys are not masked.
 */
export async function keyOfLabel(
  recorder: Recorder,
  options: ResolvedOptions<unknown>,
  source: SummarySource,
  label: string,
  nowMs: number,
): Promise<string> {
  const { mask } = options
  if (mask === undefined) return label
  const minute = Math.floor(nowMs / 60_000)
  const found = new Set<string>()
  for (const records of recorder.policies.values()) {
    for (const record of records) {
      const perMinute = await source.summaries(record, minute).catch(() => [])
      for (const summary of perMinute.flat())
        for (const item of summary.items) if (mask(item.key) === label) found.add(item.key)
    }
  }
  return found.size === 1 ? ([...found][0] as string) : label
}
