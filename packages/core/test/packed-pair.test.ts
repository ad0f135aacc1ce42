// The packed-limits script decides its commonest batch (two policies, every request a consume of
// cost 1, no key blocked) on a path of its own (lua/lib/packed-pair.lua). This checks, for random
// states and batches, that the path replies and leaves Redis byte for byte as the general path
// does: the same requests, sent once as that batch (no per-request ARGV) and once with each
// request's cost and ticket written out (which takes the general path), on two copies of a state.
import fc from 'fast-check'
import type { Redis } from 'ioredis'
import { describe, it } from 'vitest'
import { SCRIPTS } from '../src/stores/scripts.generated.js'
import { useRedis } from './setup/redis.js'
import { batchArb, expectSamePaths, MARKER, PENALTY, requestArb } from './setup/script-requests.js'

const redis = useRedis()

const policyArb = fc.record({
  module: fc.constantFrom('gc', 'fw'),
  limit: fc.integer({ min: 1, max: 8 }),
  windowMs: fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 41, max: 5000 })),
  burstExtra: fc.integer({ min: 0, max: 6 }),
})
type Policy = typeof policyArb extends fc.Arbitrary<infer P> ? P : never

const caseArb = fc.tuple(policyArb, policyArb).chain((pair) =>
  fc.record({
    pair: fc.constant(pair),
    // the pair's numbers when the batch runs: the same, or changed since the state was written
    // (a lower gcra limit, a shorter fixed window: the states the general rules re-express)
    later: fc.option(
      fc.tuple(
        ...pair.map((p) => policyArb.map((q) => ({ ...q, module: p.module }))),
      ) as fc.Arbitrary<[Policy, Policy]>,
      { nil: undefined },
    ),
    // state built before the batch: one call per request, each `advanceMs` after the last
    before: fc.array(fc.record({ request: requestArb, advanceMs: fc.nat({ max: 60 }) }), {
      maxLength: 10,
    }),
    gapMs: fc.oneof(fc.nat({ max: 60 }), fc.nat({ max: 6000 })),
    batch: batchArb,
  }),
)

function policyArgs(pair: readonly Policy[]): (string | number)[] {
  return pair.flatMap((p) => [
    p.module,
    p.limit,
    p.windowMs,
    p.module === 'gc' ? p.limit + p.burstExtra : p.limit,
  ])
}

// One packed-limits call: `costs` undefined sends the batch as a store sends consumes of cost 1
// (no per-request ARGV); otherwise each request's cost (and an empty ticket) is written out.
function call(
  client: Redis,
  keys: readonly string[],
  costs: readonly number[] | undefined,
  clock: number | string,
  pair: readonly Policy[],
): Promise<unknown> {
  const perRequest = (costs ?? []).flatMap((cost) => [
    cost > PENALTY ? `p${cost - PENALTY}` : cost,
    '',
  ])
  return client.eval(
    SCRIPTS['packed-limits'].source,
    keys.length + 1,
    ...keys,
    MARKER,
    clock,
    0,
    2,
    ...policyArgs(pair),
    ...perRequest,
  )
}

let run = 0

describe('packed-limits, a batch of consumes of cost 1 under two policies', () => {
  it('replies and writes as the general path, on every state', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, (c) => {
        const client = redis.client
        const id = run++
        return expectSamePaths({
          client,
          keyOf: (side, k) => `pp${id}:${side}:{${k}}`,
          before: c.before,
          gapMs: c.gapMs,
          batch: c.batch,
          send: (keys, costs, clock, phase) =>
            call(client, keys, costs, clock, phase === 'batch' ? (c.later ?? c.pair) : c.pair),
        })
      }),
      { numRuns: 300 },
    )
  })
})
