// Differential property tests: each Lua script and its TypeScript twin, driven by the same random
// traffic on an injected clock, give identical decisions.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { LimiterOptions, Store, StoreCall, StoreDecision } from '../src/index.js'
import {
  ALGORITHMS,
  type Algorithm,
  createLimiter,
  type Decision,
  type Limiter,
  MemoryStore,
  RedisStore,
} from '../src/index.js'
import { waitTicket } from '../src/stores/leases.js'
import { TWINS, withClock } from '../src/testing/index.js'
import { useRedis } from './setup/redis.js'

const redis = useRedis()

const COUNTING = new Set<Algorithm>([
  'fixed-window',
  'sliding-window',
  'sliding-log',
  'concurrency',
])
const RESERVING = new Set<Algorithm>(['gcra', 'token-bucket', 'leaky-bucket'])

type Op =
  | { kind: 'consume'; advanceMs: number; key: number; cost: number; maxDelay?: number | undefined }
  | { kind: 'refund'; advanceMs: number; key: number; cost: number; exact: boolean; pick: number }
  | { kind: 'release'; advanceMs: number; key: number; cost: 0 }
  | { kind: 'penalize'; advanceMs: number; key: number; cost: number }
  | { kind: 'block'; advanceMs: number; key: number; cost: number }
  | { kind: 'reset'; advanceMs: number; key: number; cost: 0 }
  | { kind: 'policy'; limit: number; windowMs: number; burst: number }

// `retryAfterMs`: a concurrency policy's estimate; `wait`: a reserving policy's maxDelay and
// delayAfter (either may be absent), used when the algorithm can reserve.
const policyArb = fc.record({
  limit: fc.integer({ min: 1, max: 12 }),
  windowMs: fc.oneof(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 51, max: 5000 })),
  burstExtra: fc.integer({ min: -5, max: 10 }),
  retryAfterMs: fc.integer({ min: 1, max: 6000 }),
  wait: fc.option(
    fc.record({
      maxDelayMs: fc.option(fc.integer({ min: 1, max: 3000 }), { nil: undefined }),
      delayAfter: fc.option(fc.integer({ min: 1, max: 20 }), { nil: undefined }),
    }),
    { nil: undefined },
  ),
})
type FirstPolicy = typeof policyArb extends fc.Arbitrary<infer P> ? P : never

// A consume's own wait cap (consume's `maxDelay`), mostly none.
const maxDelayArb = fc.option(
  fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 50 }), fc.integer({ min: 51, max: 4000 })),
  { nil: undefined, freq: 2 },
)

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
        maxDelay: maxDelayArb,
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
        // which admission to refund: the latest (0), or an earlier one (a reservation that
        // is no longer the tail of its queue)
        pick: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 5 })),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('release' as const),
        advanceMs: advance,
        key: fc.integer({ min: 0, max: 2 }),
        cost: fc.constant(0 as const),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('penalize' as const),
        advanceMs: advance,
        key: fc.integer({ min: 0, max: 2 }),
        cost: fc.integer({ min: 1, max: 30 }),
      }),
    },
    {
      weight: 1,
      // cost: the block's duration
      arbitrary: fc.record({
        kind: fc.constant('block' as const),
        advanceMs: advance,
        key: fc.integer({ min: 0, max: 2 }),
        cost: fc.integer({ min: 1, max: windowMs * 3 }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('reset' as const),
        advanceMs: advance,
        key: fc.integer({ min: 0, max: 2 }),
        cost: fc.constant(0 as const),
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
  // each blocked key's end
  readonly #blocks = new Map<string, number>()
  #leases = 0
  consume(call: StoreCall): Promise<StoreDecision> {
    const id = `${call.namespace}${call.key}`
    const now = call.nowMs as number
    const leftMs = Math.max(0, (this.#blocks.get(id) ?? 0) - now)
    if (leftMs > 0) {
      // blocked: the policy peeks (counting nothing); refused until the block ends at least
      const o = TWINS[call.policy.algorithm].check(this.#states.get(id), now, call.policy, 0)
      if (o.state !== undefined) this.#states.set(id, o.state)
      return Promise.resolve({
        allowed: false,
        remaining: 0,
        resetMs: Math.max(o.resetMs, leftMs),
        retryAfterMs: Math.max(o.retryAfterMs, leftMs),
      })
    }
    // The state is also handed back for reuse, as MemoryStore does: the in-place path is the
    // one compared with Lua.
    const state = this.#states.get(id)
    // a consume's ticket: a concurrency lease, or a waiting policy's own wait cap
    const lease =
      call.policy.algorithm === 'concurrency' && call.cost > 0
        ? `${call.cost}:t${this.#leases++}`
        : waitTicket(call.policy, call.waitMs)
    const outcome = TWINS[call.policy.algorithm].check(
      state,
      call.nowMs as number,
      call.policy,
      call.cost,
      state,
      lease,
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
  release(call: StoreCall): Promise<void> {
    return this.refund(call)
  }
  reset(call: Omit<StoreCall, 'cost'>): Promise<void> {
    this.#states.delete(`${call.namespace}${call.key}`)
    this.#blocks.delete(`${call.namespace}${call.key}`)
    return Promise.resolve()
  }
  penalize(call: StoreCall): Promise<StoreDecision> {
    const id = `${call.namespace}${call.key}`
    const penalize = TWINS[call.policy.algorithm].penalize
    if (penalize === undefined) throw new Error(`no penalty for ${call.policy.algorithm}`)
    const o = penalize(this.#states.get(id), call.nowMs as number, call.policy, call.cost)
    if (o.state === null) this.#states.delete(id)
    else this.#states.set(id, o.state)
    return this.consume({ ...call, cost: 0 })
  }
  block(call: Omit<StoreCall, 'cost'>, durationMs: number): Promise<number> {
    const id = `${call.namespace}${call.key}`
    const now = call.nowMs as number
    const endMs = Math.max(this.#blocks.get(id) ?? 0, now + durationMs)
    this.#blocks.set(id, endMs)
    return Promise.resolve(endMs - now)
  }
}

type StorePair = () => [Store, Store, () => Promise<void>]

async function scenario(
  algorithm: Algorithm,
  stores: StorePair,
  first: FirstPolicy,
  ops: readonly Op[],
  startMs: number,
): Promise<void> {
  let now = startMs
  const clock = () => now
  const name = `twin${run++}`
  const [storeA, storeB, close] = stores()
  const make = (limit: number, windowMs: number, burst: number): [Limiter, Limiter] => {
    const b = COUNTING.has(algorithm) ? limit : Math.max(1, burst)
    const { wait } = first
    const options = {
      algorithm,
      limit,
      window: windowMs,
      burst: b,
      name,
      retryAfter: algorithm === 'concurrency' ? first.retryAfterMs : undefined,
      maxDelay: RESERVING.has(algorithm) ? wait?.maxDelayMs : undefined,
      delayAfter:
        RESERVING.has(algorithm) && wait?.delayAfter !== undefined
          ? Math.min(wait.delayAfter, b)
          : undefined,
    }
    return [
      createLimiter(withClock({ ...options, store: storeA } as LimiterOptions, clock)),
      createLimiter(withClock({ ...options, store: storeB } as LimiterOptions, clock)),
    ]
  }
  let [a, b] = make(first.limit, first.windowMs, first.limit + first.burstExtra)
  const last = new Map<number, [Decision, Decision]>()
  // each key's admissions, latest first (a refund may name any of the last few)
  const admitted = new Map<number, Array<[Decision, Decision]>>()
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
        const options = op.maxDelay === undefined ? undefined : { maxDelay: op.maxDelay }
        const [da, db] = await Promise.all([
          a.consume(key, cost, options),
          b.consume(key, cost, options),
        ])
        expect(numbers(db), `step ${i} (${JSON.stringify(op)}) at ${now - startMs} ms`).toEqual(
          numbers(da),
        )
        if (da.allowed && cost > 0) {
          last.set(op.key, [da, db])
          admitted.set(op.key, [[da, db], ...(admitted.get(op.key) ?? []).slice(0, 5)])
        }
      } else if (op.kind === 'release') {
        const taken = last.get(op.key)
        if (taken !== undefined)
          await Promise.all([a.release(key, taken[0]), b.release(key, taken[1])])
      } else if (op.kind === 'penalize') {
        await penalizeBoth(a, b, key, op.cost, `step ${i} (${JSON.stringify(op)})`)
      } else if (op.kind === 'block') {
        await Promise.all([a.block(key, op.cost), b.block(key, op.cost)])
      } else if (op.kind === 'reset') {
        await Promise.all([a.reset(key), b.reset(key)])
      } else {
        const decisions = op.exact ? admitted.get(op.key)?.[op.pick] : undefined
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

// A penalty on both: the same decision afterwards, or the same refusal (only concurrency
// policies: a penalty is not a lease).
async function penalizeBoth(a: Limiter, b: Limiter, key: string, cost: number, step: string) {
  if (a.policies.every((p) => p.algorithm === 'concurrency')) {
    await expect(a.penalize(key, cost)).rejects.toMatchObject({ code: 'ERR_LIMITER_UNSUPPORTED' })
    await expect(b.penalize(key, cost)).rejects.toMatchObject({ code: 'ERR_LIMITER_UNSUPPORTED' })
    return
  }
  const [da, db] = await Promise.all([a.penalize(key, cost), b.penalize(key, cost)])
  expect(numbers(db), step).toEqual(numbers(da))
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

// Waiting policies only: queues of reservations, and refunds of any of the last few
// admissions. A reservation's refund gives back only while it is the tail of its queue (its
// ticket names the TAT it left), in Lua as in TypeScript.
function waitingOps(windowMs: number, limit: number): fc.Arbitrary<Op[]> {
  const advance = fc.oneof(
    { weight: 5, arbitrary: fc.constant(0) },
    { weight: 4, arbitrary: fc.integer({ min: 1, max: Math.max(1, Math.ceil(windowMs / limit)) }) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: windowMs * 2 }) },
  )
  const key = fc.integer({ min: 0, max: 1 })
  const cost = fc.integer({ min: 1, max: 3 })
  return fc.array(
    fc.oneof(
      {
        weight: 3,
        arbitrary: fc.record({
          kind: fc.constant('consume' as const),
          advanceMs: advance,
          key,
          cost,
          maxDelay: maxDelayArb,
        }),
      },
      {
        weight: 2,
        arbitrary: fc.record({
          kind: fc.constant('refund' as const),
          advanceMs: advance,
          key,
          cost,
          exact: fc.constant(true),
          pick: fc.integer({ min: 0, max: 5 }),
        }),
      },
    ),
    { minLength: 10, maxLength: 80 },
  )
}

const waitingTraffic = policyArb.chain((p) =>
  fc.tuple(
    fc.constant({
      ...p,
      wait: { maxDelayMs: p.wait?.maxDelayMs ?? 2000, delayAfter: p.wait?.delayAfter },
    }),
    waitingOps(p.windowMs, p.limit),
    fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
  ),
)

describe.each([...RESERVING])('%s waiting', (algorithm) => {
  it('Lua and TypeScript agree on refunds of reservations, at the tail or not', async () => {
    const pair: StorePair = () => [
      new TwinStore(),
      new RedisStore({ client: redis.client }),
      async () => {},
    ]
    await fc.assert(
      fc.asyncProperty(waitingTraffic, ([first, ops, startMs]) =>
        scenario(algorithm, pair, first, ops, startMs),
      ),
      { numRuns: 60 },
    )
  })
})
