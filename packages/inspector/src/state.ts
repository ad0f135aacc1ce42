// The page's data, as the JSON API answers it: every policy with its rates over 15 minutes and
// its top refused keys over 1, 5 and 15 minutes (both merged across processes through Redis when
// one is given), the circuits, and the current blocks. Keys are labelled by `maskKey` before they
// leave this module.
import type { Limiter } from '@limiter/core'
import type { BlockRegistry, BlockRow } from './blocks.js'
import type { ResolvedOptions } from './options.js'
import { type PolicyRecord, type Recorder, SERIES, type SeriesName } from './recorder.js'
import { readSummaries } from './redis-sync.js'
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
  /**
   * Mean decisions per second per `STEP_SECONDS`, oldest first, over 15 minutes: every
   * process's summed when `merged`, else this process's.
   */
  readonly rates: Record<SeriesName, number[]>
  /** This process's own `rates` (only when `merged`: else they are `rates`). */
  readonly ownRates?: Record<SeriesName, number[]> | undefined
  /** Refused requests counted in the summaries per span (the N of the N/k bound). */
  readonly refused: Record<'1m' | '5m' | '15m', number>
  readonly top: Record<'1m' | '5m' | '15m', TopKey[]>
}

export interface InspectorState {
  readonly nowMs: number
  readonly stepSeconds: number
  readonly topK: number
  /** Rates and top keys merged across processes through Redis (false: this process's only). */
  readonly merged: boolean
  /** Processes that wrote to Redis in the last 30 s (1 when not `merged`). */
  readonly processes: number
  readonly redisError?: string | undefined
  readonly policies: PolicyState[]
  readonly circuits: Array<{ limiter: string; domain: string; state: string; sinceMs: number }>
  /** Current blocks and penalties, latest end first (each checked by `peek` just now). */
  readonly blocks: BlockRow[]
}

export interface SummarySource {
  /** Per minute, newest first, the summaries to merge for `record` (several with Redis). */
  summaries(record: PolicyRecord, minute: number): Promise<SummaryData[][]>
  /** `record`'s decisions per second, as `PolicyRecord.rates` (every process's with Redis). */
  rates(record: PolicyRecord, nowMs: number): Promise<number[][]>
  /** Before a read: writes this process's own, answers how many processes report (Redis). */
  sync?(nowMs: number): Promise<number>
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
    rates: async (record, nowMs) => record.rates(nowMs, STEP_SECONDS),
  }
}

/** Every process's summaries through Redis (`sync` writes this process's own first). */
export function redisSource(
  options: ResolvedOptions<unknown>,
  fleet: Pick<SummarySource, 'rates' | 'sync'>,
): SummarySource {
  const send = options.redis as NonNullable<typeof options.redis>
  return {
    async summaries(record, minute) {
      const perMinute: SummaryData[][] = []
      for (let m = 0; m < 15; m++)
        perMinute.push(await readSummaries(send, options.redisPrefix, record.id, minute - m))
      return perMinute
    },
    ...fleet,
  }
}

/** Builds the state the page and the JSON API show. */
export async function buildState(
  recorder: Recorder,
  blocks: BlockRegistry,
  options: ResolvedOptions<unknown>,
  source: SummarySource,
  nowMs: number,
): Promise<InspectorState> {
  const minute = Math.floor(nowMs / 60_000)
  const local = localSource()
  let processes = 1
  let redisError: string | undefined
  try {
    if (source.sync !== undefined) processes = await source.sync(nowMs)
  } catch (error) {
    redisError = error instanceof Error ? error.message : String(error)
  }
  const policies: PolicyState[] = []
  for (const [limiter, records] of recorder.policies) {
    for (const [i, record] of records.entries()) {
      const read = async (from: SummarySource) => ({
        perMinute: await from.summaries(record, minute),
        rates: await from.rates(record, nowMs),
      })
      let shared: Awaited<ReturnType<typeof read>> | undefined
      if (source.sync !== undefined && redisError === undefined)
        shared = await read(source).catch((error: unknown) => {
          redisError = error instanceof Error ? error.message : String(error)
          return undefined
        })
      const own = await read(local)
      policies.push(policyState(limiter, i, record, own, shared, options))
    }
  }
  const merged = source.sync !== undefined && redisError === undefined
  return {
    nowMs,
    stepSeconds: STEP_SECONDS,
    topK: options.topK,
    merged,
    processes: merged ? processes : 1,
    redisError,
    policies: merged ? policies : policies.map(({ ownRates: _, ...p }) => p),
    circuits: [...recorder.circuits.values()],
    blocks: await blocks.current(nowMs, options.mask ?? ((key) => key)),
  }
}

interface Read {
  readonly perMinute: SummaryData[][]
  readonly rates: number[][]
}

function policyState(
  limiter: Limiter,
  i: number,
  record: PolicyRecord,
  own: Read,
  shared: Read | undefined,
  options: ResolvedOptions<unknown>,
): PolicyState {
  const policy = limiter.policies[i] as Limiter['policies'][number]
  const named = (series: number[][]) =>
    Object.fromEntries(SERIES.map((name, s) => [name, series[s] ?? []])) as Record<
      SeriesName,
      number[]
    >
  const label = (hitter: HeavyHitter): TopKey => ({
    key: options.mask === undefined ? hitter.key : options.mask(hitter.key),
    count: hitter.count,
    error: hitter.error,
  })
  const { perMinute } = shared ?? own
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
    rates: named((shared ?? own).rates),
    ownRates: named(own.rates),
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
