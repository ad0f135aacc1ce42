// Differential property tests: each Lua script and its TypeScript twin, driven by the same random
// traffic on an injected clock, give identical decisions.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Store, StoreCall, StoreDecision } from '../src/index.js'
import {
  ALGORITHMS,
  type Algorithm,
  createLimiter,
  type Decision,
  type Limiter,
  MemoryStore,
  RedisStore,
} from '../src/index.js'
import { TWINS, withClock } from '../src/testing.js'
import { useRedis } from './setup/redis.js'

const redis = useRedis()

const COUNTING = new Set<Algorithm>(['fixed-window', 'sliding-window', 'sliding-log'])

type Op =
  | { kind: 'consume'; advanceMs: number; key: number; cost: number }
  | { kind: 'refund'; advanceMs: number; key: number; cost: number; exact: boolean }
  | { kind: 'policy'; limit: number; windowMs: number; burst: number }

const policyArb = fc.record({
  limit: fc.integer({ min: 1, max: 12 }),
  windowMs: fc.oneof(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 51, max: 5000 })),
  burstExtra: fc.integer({ min: -5, max: 10 }),
})

function opArb(windowMs: number): fc.Arbitrary<Op> {
  const advance = fc.oneof(
    { weight: 4, arbitrary: fc.constant(0) },
    { weight: 4, arbitrary: fc.integer({ min: 1, max: Math.max(1, Math.ceil(windowMs / 4)) }) },
    { weight: 2, arbitrary: fc.integer({ min: 1, max: windowMs * 3 }) },
  )
  return fc.oneof(
    {
      weight: 12,
      arbitrary: fc.record({
        kind: fc.constant('consume' as const),
        advanceMs: advance,
        key: fc.integer({ min: 0, max: 2 }),
        cost: fc.integer({ min: 0, max: 20 }),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('refund' as const),
        advanceMs: advance,
        key: fc.integer({ min: 0, max: 2 }),
        cost: fc.integer({ min: 1, max: 20 }),
        exact: fc.boolean(),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('policy' as const),
        limit: fc.integer({ min: 1, max: 12 }),
        windowMs: fc.integer({ min: 1, max: 5000 }),
        burst: fc.integer({ min: 1, max: 20 }),
      }),
    },
  )
}

let run = 0

/** The twins with no expiry at all: what the Lua side keeps when its keys outlive the clock. */
class TwinStore implements Store {
  readonly local = true
  readonly #states = new Map<string, unknown>()
  consume(call: StoreCall): Promise<StoreDecision> {
    const id = `${call.namespace}${call.key}`
    // The state is also handed back for reuse, as MemoryStore does: the in-place path is the
    // one compared with Lua.
    const state = this.#states.get(id)
    const outcome = TWINS[call.policy.algorithm].check(
      state,
      call.nowMs as number,
      call.policy,
      call.cost,
      state,
    )
    if (outcome.state !== undefined) this.#states.set(id, outcome.state)
    return Promise.resolve(outcome)
  }
  refund(call: StoreCall): Promise<void> {
    const id = `${call.namespace}${call.key}`
    const outcome = TWINS[call.policy.algorithm].refund(
      this.#states.get(id),
      call.nowMs as number,
      call.policy,
      call.cost,
      call.ticket,
    )
    if (outcome.state === null) this.#states.delete(id)
    else this.#states.set(id, outcome.state)
    return Promise.resolve()
  }
  reset(call: Omit<StoreCall, 'cost'>): Promise<void> {
    this.#states.delete(`${call.namespace}${call.key}`)
    return Promise.resolve()
  }
}

type StorePair = () => [Store, Store, () => Promise<void>]

async function scenario(
  algorithm: Algorithm,
  stores: StorePair,
  first: { limit: number; windowMs: number; burstExtra: number },
  ops: readonly Op[],
  startMs: number,
): Promise<void> {
  let now = startMs
  const clock = () => now
  const name = `twin${run++}`
  const [storeA, storeB, close] = stores()
  const make = (limit: number, windowMs: number, burst: number): [Limiter, Limiter] => {
    const b = COUNTING.has(algorithm) ? limit : Math.max(1, burst)
    const options = { algorithm, limit, window: windowMs, burst: b, name }
    return [
      createLimiter(withClock({ ...options, store: storeA }, clock)),
      createLimiter(withClock({ ...options, store: storeB }, clock)),
    ]
  }
  let [a, b] = make(first.limit, first.windowMs, first.limit + first.burstExtra)
  const last = new Map<number, [Decision, Decision]>()
  try {
    for (const [i, op] of ops.entries()) {
      if (op.kind === 'policy') {
        ;[a, b] = make(op.limit, op.windowMs, op.burst)
        continue
      }
      now += op.advanceMs
      const key = `k${op.key}`
      const cost = Math.min(op.cost, a.policy.burst)
      if (op.kind === 'consume') {
        const [da, db] = await Promise.all([a.consume(key, cost), b.consume(key, cost)])
        expect(numbers(db), `step ${i} (${JSON.stringify(op)}) at ${now - startMs} ms`).toEqual(
          numbers(da),
        )
        if (da.allowed && cost > 0) last.set(op.key, [da, db])
      } else {
        const decisions = op.exact ? last.get(op.key) : undefined
        await a.refund(key, cost, decisions?.[0])
        await b.refund(key, cost, decisions?.[1])
      }
      const [pa, pb] = await Promise.all([a.peek(key), b.peek(key)])
      expect(numbers(pb), `peek after step ${i}`).toEqual(numbers(pa))
    }
  } finally {
    await close()
  }
}

// Redis's limiter may answer from its blocked-key cache: the same numbers, another source.
function numbers(decision: Decision): Omit<Decision, 'source'> {
  const { source: _source, ...rest } = decision
  return rest
}

const trafficArb = policyArb.chain((p) =>
  fc.tuple(
    fc.constant(p),
    fc.array(opArb(p.windowMs), { minLength: 1, maxLength: 60 }),
    fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
  ),
)

describe.each(ALGORITHMS)('%s', (algorithm) => {
  it('Lua script and TypeScript twin give identical decisions for random traffic, refunds and policy changes', async () => {
    const pair: StorePair = () => [
      new TwinStore(),
      new RedisStore({ client: redis.client }),
      async () => {},
    ]
    await fc.assert(
      fc.asyncProperty(trafficArb, ([first, ops, startMs]) =>
        scenario(algorithm, pair, first, ops, startMs),
      ),
      { numRuns: 60 },
    )
  })

  it('MemoryStore expiry is invisible: expired state decides like kept state', async () => {
    const pair: StorePair = () => {
      const memory = new MemoryStore()
      return [new TwinStore(), memory, () => memory.close()]
    }
    const noPolicyChange = trafficArb.map(
      ([p, ops, t]) => [p, ops.filter((o) => o.kind !== 'policy'), t] as const,
    )
    await fc.assert(
      fc.asyncProperty(noPolicyChange, ([first, ops, startMs]) =>
        scenario(algorithm, pair, first, ops, startMs),
      ),
      { numRuns: 100 },
    )
  })
})
