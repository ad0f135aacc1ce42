// The raw key behind a label the page shows (`k:3f9a0c12…`), for the look-up and the actions.
import type { ResolvedOptions } from './options.js'
import type { Recorder } from './recorder.js'
import type { SummarySource } from './state.js'

/**
 * The raw key behind `label`: the one key of the last 15 minutes' summaries (any policy) or of
 * the blocks listed (`listed`) that `mask` labels so; `label` itself when none or several do, or
 * when keys are not masked.
 */
export async function keyOfLabel(
  recorder: Recorder,
  options: ResolvedOptions<unknown>,
  source: SummarySource,
  label: string,
  nowMs: number,
  listed: readonly string[] = [],
): Promise<string> {
  const { mask } = options
  if (mask === undefined) return label
  const minute = Math.floor(nowMs / 60_000)
  const found = new Set<string>()
  for (const key of listed) if (mask(key) === label) found.add(key)
  for (const records of recorder.policies.values()) {
    for (const record of records) {
      const perMinute = await source.summaries(record, minute).catch(() => [])
      for (const summary of perMinute.flat())
        for (const item of summary.items) if (mask(item.key) === label) found.add(item.key)
    }
  }
  return found.size === 1 ? ([...found][0] as string) : label
}
