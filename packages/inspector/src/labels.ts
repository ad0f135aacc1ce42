// The raw key behind a label the page shows (`k:3f9a0c12…`), for the look-up and the actions.
import { isKeyDigest } from '@limiter/core/http'
import { isHashLabel, type ResolvedOptions } from './options.js'
import type { Recorder } from './recorder.js'
import type { SummarySource } from './state.js'

/** The raw key to act on, or why the text names none (404) or several (409). */
export type Resolved =
  | { readonly key: string }
  | { readonly status: 404 | 409; readonly error: string; readonly key?: undefined }

/**
 * The raw key behind `typed`: the one key of the last 15 minutes' summaries (any policy) or of
 * the blocks listed (`listed`) that `mask` labels so. A text several keys are labelled with is
 * refused (409), and so is one with a default label's shape that no key has (404: unknown, or
 * aged out); any other text is a raw key, as is every text when keys are not masked.
 */
export async function keyOfLabel(
  recorder: Recorder,
  options: ResolvedOptions<unknown>,
  source: SummarySource,
  typed: string,
  nowMs: number,
  listed: readonly string[] = [],
): Promise<Resolved> {
  const { mask } = options
  if (mask === undefined) return { key: typed }
  const found = await keysLabelled(recorder, mask, source, typed, nowMs, listed)
  const shown = JSON.stringify(typed)
  if (found.length === 1 && isKeyDigest(found[0] as string))
    return {
      status: 404,
      error: `The label ${shown} is a key longer than 200 bytes, which the summaries keep only as its digest. Nothing was done; use the raw key.`,
    }
  if (found.length === 1) return { key: found[0] as string }
  if (found.length > 1)
    return {
      status: 409,
      error: `The label ${shown} is ambiguous: ${found.length} keys of the last 15 minutes have it. Nothing was done; use the raw key.`,
    }
  if (options.defaultMask && isHashLabel(typed))
    return {
      status: 404,
      error: `No key of the last 15 minutes' summaries or of the blocks listed has the label ${shown} (unknown, or aged out). Nothing was done; use the raw key.`,
    }
  return { key: typed }
}

async function keysLabelled(
  recorder: Recorder,
  mask: (key: string) => string,
  source: SummarySource,
  label: string,
  nowMs: number,
  listed: readonly string[],
): Promise<string[]> {
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
  return [...found]
}
