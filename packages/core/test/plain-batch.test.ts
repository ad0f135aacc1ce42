// The gcra script (gcra, token-bucket, leaky-bucket) and the fixed-window one decide their
// commonest batch (every request a consume of cost 1, no key blocked or repeated back to back,
// and for gcra a policy that does not wait) on a path of their own (`plain` in lua/gcra.lua and
// lua/fixed-window.lua). This checks, for random states, policies and batches, that the path
// replies and leaves Redis byte for byte as the general path does: the same requests, sent once
// as that batch (no per-request ARGV) and once with each request's cost (and ticket) written
// out, which takes the general path, on two copies of a state.
import fc from 'fast-check'
import type { Redis } from 'ioredis'
import { describe, it } from 'vitest'
import { SCRIPTS } from '../src/stores/scripts.generated.js'
import { useRedis } from './setup/redis.js'
import {
  batchArb,
  expectSamePaths,
  MARKER,
  NOW_MS,
  PENALTY,
  requestArb,
} from './setup/script-requests.js'

const redis = useRedis()

const policyArb = fc.record({
  limit: fc.integer({ min: 1, max: 8 }),
  windowMs: fc.oneof(
    fc.integer({ min: 1, max: 8 }),
    fc.integer({ min: 9, max: 40 }),
    fc.integer({ min: 41, max: 5000 }),
  ),
  burst: fc.integer({ min: 1, max: 10 }),
  // a policy that waits (maxDelay): its capacity carries `after` and `wait`; the plain path
  // leaves its batches to the general one
  waits: fc.oneof(
    { weight: 4, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.record({ after: fc.nat({ max: 4 }), wait: fc.nat({ max: 200 }) }) },
  ),
})
type Policy = typeof policyArb extends fc.Arbitrary<infer P> ? P : never

// What a key holds before the batch besides what requests wrote (written by something else): a
// value of another shape, a negative or fractional count, a count, a '0' (each expiring `inMs`
// after the start), a key of another type, or a '0' with no expiry.
const foreignArb = fc.option(
  fc.record({
    kind: fc.constantFrom('text', '-3', '2.5', '7', '0', '3 5', 'hash', 'persistent'),
    inMs: fc.nat({ max: 80 }),
  }),
  { nil: undefined },
)
type Foreign = typeof foreignArb extends fc.Arbitrary<infer F> ? F : never

const caseArb = fc.record({
  policy: policyArb,
  // the policy's numbers when the batch runs: the same, or changed since the state was written
  later: fc.oneof(fc.constant(undefined), policyArb),
  // 0 in production; clock-injected tests move every expiry by a large offset
  offsetMs: fc.constantFrom(0, 86_400_000),
  before: fc.array(fc.record({ request: requestArb, advanceMs: fc.nat({ max: 60 }) }), {
    maxLength: 10,
  }),
  foreign: fc.tuple(foreignArb, foreignArb, foreignArb),
  gapMs: fc.oneof(fc.nat({ max: 8 }), fc.nat({ max: 60 }), fc.nat({ max: 6000 })),
  batch: batchArb,
})

// The scripts with a plain path: the capacity each sends, and whether a request carries a ticket.
const SCRIPTS_WITH_PLAIN = [
  {
    script: 'gcra',
    capacity: (p: Policy) =>
      p.waits === undefined ? String(p.burst) : `${p.burst}/${p.waits.after}/${p.waits.wait}`,
    tickets: true,
  },
  // burst and waiting are gcra's: a fixed-window policy sends its limit
  { script: 'fixed-window', capacity: (p: Policy) => String(p.limit), tickets: false },
] as const
type Script = (typeof SCRIPTS_WITH_PLAIN)[number]

// One script call: `costs` undefined sends the batch as a store sends consumes of cost 1 (no
// per-request ARGV); otherwise each request's cost (and an empty ticket) is written out. A
// script error is returned as its message, without where it was raised: both paths must fail
// alike (fixed-window's INCRBY on a foreign count of another shape, such as '2.5').
function call(
  client: Redis,
  s: Script,
  keys: readonly string[],
  costs: readonly number[] | undefined,
  clock: number | string,
  offsetMs: number,
  p: Policy,
): Promise<unknown> {
  const perRequest = (costs ?? []).flatMap((cost) => {
    const given = cost > PENALTY ? `p${cost - PENALTY}` : cost
    return s.tickets ? [given, ''] : [given]
  })
  const { source } = SCRIPTS[s.script]
  const args = [clock, offsetMs, p.limit, p.windowMs, s.capacity(p), ...perRequest]
  return client
    .eval(source, keys.length + 1, ...keys, MARKER, ...args)
    .catch((error: Error) => `failed: ${error.message.split(' script:')[0]}`)
}

async function makeForeign(client: Redis, key: string, f: Foreign, offsetMs: number) {
  if (f === undefined) return
  if (f.kind === 'hash') await client.hset(key, 'f', '1')
  else if (f.kind === 'persistent') await client.set(key, '0')
  else await client.set(key, f.kind, 'PXAT', NOW_MS + offsetMs + f.inMs)
}

let run = 0
const keyOf = (id: number, side: string, k: number) => `pb${id}:${side}:{${k}}`

describe.each(SCRIPTS_WITH_PLAIN)('$script script, a batch of consumes of cost 1', (s) => {
  it('replies and writes as the general path, on every state', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const client = redis.client
        const id = run++
        for (const side of ['fast', 'general'] as const)
          for (const k of [0, 1, 2])
            await makeForeign(client, keyOf(id, side, k), c.foreign[k], c.offsetMs)
        await expectSamePaths({
          client,
          keyOf: (side, k) => keyOf(id, side, k),
          before: c.before,
          gapMs: c.gapMs,
          batch: c.batch,
          send: (keys, costs, clock, phase) =>
            call(
              client,
              s,
              keys,
              costs,
              clock,
              c.offsetMs,
              phase === 'batch' ? (c.later ?? c.policy) : c.policy,
            ),
        })
      }),
      { numRuns: 1000 },
    )
  })
})
