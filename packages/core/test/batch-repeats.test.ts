// A batch may carry several requests for one key (a busy client): the scripts then read that key
// once and write it once, at the end of the batch. This checks, for random batches, that a batch
// replies and leaves Redis exactly as the same requests sent one script call each, at the same
// Redis time.
import fc from 'fast-check'
import type { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { SCRIPTS } from '../src/stores/scripts.generated.js'
import { useRedis } from './setup/redis.js'
import { MARKER, NOW_MS, PENALTY, requestArb } from './setup/script-requests.js'

const redis = useRedis()

// The one-policy scripts (`limits` and `packed-limits` decide several policies per request and
// find no repeats; `block` writes a block).
type ScriptName = Exclude<keyof typeof SCRIPTS, 'limits' | 'packed-limits' | 'block'>

const caseArb = fc.record({
  limit: fc.integer({ min: 1, max: 8 }),
  windowMs: fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 41, max: 5000 })),
  burstExtra: fc.integer({ min: 0, max: 6 }),
  // state built before the batch: one call per request, each `advanceMs` after the last
  before: fc.array(fc.record({ request: requestArb, advanceMs: fc.nat({ max: 60 }) }), {
    maxLength: 8,
  }),
  gapMs: fc.nat({ max: 60 }),
  batch: fc.array(requestArb, { minLength: 2, maxLength: 14 }),
  // a block on key 1 (ms from the batch's time), if any
  blockMs: fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }),
})

async function call(
  client: Redis,
  script: ScriptName,
  keys: readonly string[],
  costs: readonly number[],
  nowMs: number,
  policy: { limit: number; windowMs: number; burst: number },
): Promise<unknown> {
  const { source, argsPerRequest } = SCRIPTS[script]
  const sent = costs.map((cost) => (cost > PENALTY ? `p${cost - PENALTY}` : cost))
  const perRequest = sent.flatMap((cost) => (argsPerRequest === 2 ? [cost, ''] : [cost]))
  return client.eval(
    source,
    keys.length + 1,
    ...keys,
    MARKER,
    nowMs,
    0,
    policy.limit,
    policy.windowMs,
    policy.burst,
    ...perRequest,
  )
}

// What Redis holds for a key: its value and absolute expiry.
async function held(client: Redis, key: string): Promise<[string | null, number]> {
  return [await client.get(key), await client.pexpiretime(key)]
}

let run = 0

describe.each(
  Object.keys(SCRIPTS).filter(
    (name) => name !== 'limits' && name !== 'packed-limits' && name !== 'block',
  ) as ScriptName[],
)('%s.lua', (script) => {
  it('decides a batch with repeated keys as one call per request, and leaves the same state', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const client = redis.client
        const counting = script !== 'gcra'
        const policy = {
          limit: c.limit,
          windowMs: c.windowMs,
          burst: counting ? c.limit : c.limit + c.burstExtra,
        }
        const id = run++
        const keyOf = (side: string, k: number) => `br${id}:${side}:${k}`
        const clamp = (cost: number) =>
          cost > PENALTY
            ? script === 'concurrency'
              ? 1
              : cost
            : Math.max(-policy.burst, Math.min(cost, policy.burst))
        for (const side of ['batched', 'single']) {
          let now = NOW_MS
          for (const { request, advanceMs } of c.before) {
            now += advanceMs
            await call(
              client,
              script,
              [keyOf(side, request.key)],
              [clamp(request.cost)],
              now,
              policy,
            )
          }
        }
        let now = NOW_MS + c.before.reduce((sum, b) => sum + b.advanceMs, 0) + c.gapMs
        if (c.blockMs !== undefined)
          for (const side of ['batched', 'single'])
            await client.eval(
              SCRIPTS.block.source,
              2,
              `${keyOf(side, 1)}:block`,
              MARKER,
              now,
              0,
              c.blockMs,
            )
        const costs = c.batch.map((r) => clamp(r.cost))
        const batched = await call(
          client,
          script,
          c.batch.map((r) => keyOf('batched', r.key)),
          costs,
          now,
          policy,
        )
        const single: unknown[] = []
        for (const [i, r] of c.batch.entries()) {
          const reply = await call(
            client,
            script,
            [keyOf('single', r.key)],
            [costs[i] as number],
            now,
            policy,
          )
          single.push(...(reply as unknown[]))
        }
        expect(batched).toEqual(single)
        for (const k of [0, 1, 2]) {
          expect(await held(client, keyOf('batched', k)), `key ${k}`).toEqual(
            await held(client, keyOf('single', k)),
          )
        }
        // and the next request decides alike on both
        now += 1
        for (const k of [0, 1, 2]) {
          expect(await call(client, script, [keyOf('batched', k)], [1], now, policy)).toEqual(
            await call(client, script, [keyOf('single', k)], [1], now, policy),
          )
        }
        await client.del(
          ...[0, 1, 2].flatMap((k) => [keyOf('batched', k), keyOf('single', k)]),
          `${keyOf('batched', 1)}:block`,
          `${keyOf('single', 1)}:block`,
        )
      }),
      { numRuns: 150 },
    )
  })
})
