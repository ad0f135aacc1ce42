// Requests sent to a script directly, as a store batches them: for the tests that decide the same
// requests two ways on Redis and compare (batch-repeats.test.ts, packed-pair.test.ts,
// plain-batch.test.ts).
import fc from 'fast-check'
import type { Redis } from 'ioredis'
import { expect } from 'vitest'

/** Far enough ahead of the real clock that nothing written expires while a run looks at it. */
export const NOW_MS = 4_000_000_000_000

/** The block marker, which every script that decides requests takes as its last key (lua/lib/block.lua). */
export const MARKER = 'limiter:blocked'

/** A penalty of `cost - PENALTY` (sent as 'p<cost>'; not for concurrency). */
export const PENALTY = 1000

/**
 * A request on one of three keys: a cost > 0 consumes, 0 peeks, < 0 refunds, PENALTY + c
 * penalizes c.
 */
export const requestArb = fc.record({
  key: fc.integer({ min: 0, max: 2 }),
  cost: fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: 1, max: 4 }) },
    { weight: 2, arbitrary: fc.constant(0) },
    { weight: 2, arbitrary: fc.integer({ min: -4, max: -1 }) },
    { weight: 2, arbitrary: fc.integer({ min: PENALTY + 1, max: PENALTY + 12 }) },
  ),
})

/**
 * A batch's keys (indexes 0-2): any, repeats included, or two or three distinct keys, which a
 * store marks so (a 'u' before the time: lua/lib/time.lua) and a plain path reads with one MGET.
 */
export const batchArb = fc.oneof(
  fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 14 }),
  fc.shuffledSubarray([0, 1, 2], { minLength: 2 }),
)

/** What Redis holds for a key: its type, its value's bytes (hex) and its absolute expiry. */
export async function held(
  client: Redis,
  key: string,
): Promise<[string, string | undefined, number]> {
  const type = await client.type(key)
  const value = type === 'string' ? (await client.getBuffer(key))?.toString('hex') : undefined
  return [type, value, await client.pexpiretime(key)]
}

/** One case of a comparison of a script's fast path with its general path. */
export interface PathCase {
  readonly client: Redis
  /** Key `k` (0-2) of one side's copy of the state. */
  readonly keyOf: (side: 'fast' | 'general', k: number) => string
  /** Requests written to both copies first, each `advanceMs` after the one before. */
  readonly before: readonly { request: { key: number; cost: number }; advanceMs: number }[]
  readonly gapMs: number
  /** The batch's keys (indexes): consumes of cost 1. */
  readonly batch: readonly number[]
  /**
   * One script call: `costs` undefined sends the batch as a store sends consumes of cost 1;
   * `clock` is ARGV[1], the time (with a 'u' before it for a batch of distinct keys).
   */
  readonly send: (
    keys: string[],
    costs: number[] | undefined,
    clock: number | string,
    phase: 'before' | 'batch',
  ) => Promise<unknown>
}

/**
 * Writes `before` to both copies of the state, then sends the batch to the fast side as a store
 * sends it (no per-request ARGV) and to the general side with each cost written out, and expects
 * the same replies and the same state of every key. Deletes the keys after.
 */
export async function expectSamePaths(c: PathCase): Promise<void> {
  const sides = ['fast', 'general'] as const
  let now = NOW_MS
  for (const { request, advanceMs } of c.before) {
    now += advanceMs
    for (const side of sides)
      await c.send([c.keyOf(side, request.key)], [request.cost], now, 'before')
  }
  now += c.gapMs
  const keys = (side: 'fast' | 'general') => c.batch.map((k) => c.keyOf(side, k))
  // as a store sends it: distinct keys marked so
  const distinct = c.batch.length > 1 && new Set(c.batch).size === c.batch.length
  const fastReply = await c.send(keys('fast'), undefined, distinct ? `u${now}` : now, 'batch')
  const generalReply = await c.send(
    keys('general'),
    c.batch.map(() => 1),
    now,
    'batch',
  )
  expect(fastReply).toEqual(generalReply)
  for (const k of [0, 1, 2]) {
    expect(await held(c.client, c.keyOf('fast', k)), `key ${k}`).toEqual(
      await held(c.client, c.keyOf('general', k)),
    )
  }
  await c.client.del(...[0, 1, 2].flatMap((k) => sides.map((side) => c.keyOf(side, k))))
}
