// Several policies on one key (`limits`), on Redis (standalone and Cluster) and in memory:
// the Lua script and the TypeScript twins decide alike, a refusal counts nowhere (Redis state
// byte-identical), Retry-After is honest for every pair of algorithms, and failure modes,
// refunds, resets and the blocked-key cache cover every policy.
import fc from 'fast-check'
import { Cluster, Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { freePort } from '../../../test-support/redis.js'
import {
  ALGORITHMS,
  type Algorithm,
  createLimiter,
  type Decision,
  type Limiter,
  type LimiterStoreOptions,
  type LimitSpec,
  MemoryStore,
  RedisStore,
  type Store,
} from '../src/index.js'
import { keySlot, slotTag } from '../src/stores/cluster-slot.js'
import { withClock } from '../src/testing/index.js'
import { scanKeys, useCluster, useRedis } from './setup/redis.js'
import { storeCases } from './setup/stores.js'

const redis = useRedis()
const cluster = useCluster(3, 0)

const COUNTING = new Set<Algorithm>(['fixed-window', 'sliding-window', 'sliding-log'])
let unique = 0

/**
 * A spec of `algorithm` with these numbers (burst only where the algorithm takes one). A
 * concurrency policy's Retry-After estimate is its window unless given: its refusals then wait
 * exactly until a lease expires, as a rate policy's do until capacity returns.
 */
function spec(
  algorithm: Algorithm,
  limit: number,
  windowMs: number,
  burst = limit,
  retryAfterMs = windowMs,
): LimitSpec {
  if (algorithm === 'concurrency')
    return { algorithm, limit, window: windowMs, retryAfter: retryAfterMs }
  return COUNTING.has(algorithm)
    ? { algorithm, limit, window: windowMs }
    : { algorithm, limit, window: windowMs, burst }
}

// Specs unique by default name: two concurrency specs that differ only in `retryAfter` share a
// name, and a limiter refuses two policies of one name at construction.
function byDefaultName(s: LimitSpec): string {
  return JSON.stringify({ ...s, retryAfter: undefined })
}

function limiterOn(store: Store, limits: readonly LimitSpec[], clock: () => number): Limiter {
  return createLimiter(
    withClock({ limits, name: `L${unique++}`, store, blockedCache: false }, clock),
  )
}

// The numbers of a decision, policies included (Redis and memory differ only in `source`).
function numbers(d: Decision) {
  const { allowed, limit, remaining, resetMs, retryAfterMs, policies } = d
  return { allowed, limit, remaining, resetMs, retryAfterMs, policies: [...policies] }
}

const PAIRS = ALGORITHMS.flatMap((a) => ALGORITHMS.map((b) => [a, b] as const))
// The algorithms whose states a set keeps in one key (lua/lib/packed-limits.lua) when it does
// not wait.
const PACKED = new Set<Algorithm>(['gcra', 'token-bucket', 'leaky-bucket', 'fixed-window'])

describe('construction', () => {
  it('names both options when `limits` comes with a one-policy field', () => {
    expect(() =>
      createLimiter({ limits: [{ limit: 1, window: 1000 }], limit: 5 } as never),
    ).toThrow(/`limit`.*cannot be combined with `limits`/)
  })

  it('refuses two policies with the same name, named or derived from the same numbers', () => {
    expect(() =>
      createLimiter({
        limits: [
          { limit: 5, window: '1s' },
          { limit: 5, window: '1s' },
        ],
      }),
    ).toThrow(/`limits\[1\]\.name`.*also the name of limits\[0\]/)
    expect(() =>
      createLimiter({
        limits: [
          { name: 'a', limit: 5, window: '1s' },
          { name: 'a', limit: 9, window: '1m' },
        ],
      }),
    ).toThrow(/limits\[1\]\.name/)
  })

  it('takes 1 to 8 policies and names the bad field of a bad one', () => {
    expect(() => createLimiter({ limits: [] })).toThrow(/`limits`: must hold 1 to 8/)
    const nine = Array.from({ length: 9 }, (_, i) => ({ limit: i + 1, window: '1s' }))
    expect(() => createLimiter({ limits: nine })).toThrow(/must hold 1 to 8/)
    expect(() => createLimiter({ limits: [{ limit: 5, window: '1x' }] })).toThrow(
      /`limits\[0\]\.window`/,
    )
    expect(() =>
      createLimiter({ limits: [{ limit: 5, window: '1s', max: 3 } as LimitSpec] }),
    ).toThrow(/`limits\[0\]\.max`/)
    expect(() =>
      createLimiter({
        limits: [{ limit: 5, window: '1s', algorithm: 'fixed-window', burst: 9 }],
      }),
    ).toThrow(/`limits\[0\]\.burst`/)
  })

  it('a cost above the smallest burst can never pass, so it is refused as input', async () => {
    const limiter = createLimiter({
      limits: [
        { limit: 10, window: '1s', algorithm: 'gcra', burst: 3 },
        { limit: 100, window: '1h' },
      ],
    })
    await expect(limiter.consume('k', 4)).rejects.toThrow(/smallest policy burst \(3\)/)
    expect((await limiter.consume('k', 3)).allowed).toBe(true)
  })

  it('names policies from their numbers or their `name`, and the limiter from them', () => {
    const limiter = createLimiter({
      limits: [
        { name: 'burst', limit: 10, window: '1s', algorithm: 'gcra', burst: 20 },
        { limit: 1000, window: '1d', algorithm: 'fixed-window' },
      ],
    })
    expect(limiter.policies.map((p) => p.name)).toEqual(['burst', 'fw1000/1d'])
    expect(limiter.name).toBe('burst+fw1000/1d')
    expect(limiter.policy).toEqual({ algorithm: 'gcra', limit: 10, windowMs: 1000, burst: 20 })
  })
})

describe('decisions', () => {
  it('report every policy, and the limiter as its most constraining one', async () => {
    const limiter = createLimiter({
      limits: [
        { name: 'second', limit: 3, window: '1s', algorithm: 'fixed-window' },
        { name: 'day', limit: 5, window: '1d', algorithm: 'fixed-window' },
      ],
    })
    const first = await limiter.consume('k')
    expect(first.policies.map((p) => [p.name, p.allowed, p.remaining])).toEqual([
      ['second', true, 2],
      ['day', true, 4],
    ])
    expect(first).toMatchObject({ allowed: true, limit: 3, remaining: 2 })
    await limiter.consume('k')
    await limiter.consume('k')
    const refused = await limiter.consume('k')
    expect(refused.allowed).toBe(false)
    expect(refused.policies.map((p) => [p.name, p.allowed, p.remaining])).toEqual([
      ['second', false, 0],
      ['day', true, 2],
    ])
    expect(refused).toMatchObject({ limit: 3, remaining: 0 })
    expect(refused.retryAfterMs).toBe(refused.policies[0]?.retryAfterMs)
    expect(JSON.parse(JSON.stringify(refused)).policies).toHaveLength(2)
  })

  it('a one-policy decision has its one entry too', async () => {
    const d = await createLimiter({
      limit: 2,
      window: '1s',
      algorithm: 'fixed-window',
      name: 'one',
    }).consume('k')
    expect(d.policies).toEqual([
      { name: 'one', allowed: true, limit: 2, remaining: 1, resetMs: 1000, retryAfterMs: 0 },
    ])
  })
})

describe.each(storeCases(redis, cluster))('%s', (_name, makeStore) => {
  it('peek counts nothing; refund with the decision gives back exactly what it took; reset clears every policy', async () => {
    let now = 1_800_000_000_000
    const limiter = limiterOn(
      makeStore(),
      [spec('sliding-log', 3, 10_000), spec('gcra', 5, 10_000, 5), spec('fixed-window', 4, 60_000)],
      () => now,
    )
    await limiter.peek('k')
    const taken = await limiter.consume('k', 2)
    expect(taken.policies.map((p) => p.remaining)).toEqual([1, 3, 2])
    now += 5
    await limiter.refund('k', 2, taken)
    expect((await limiter.peek('k')).policies.map((p) => p.remaining)).toEqual([3, 5, 4])
    await limiter.consume('k', 3)
    expect((await limiter.consume('k')).allowed).toBe(false)
    await limiter.reset('k')
    expect((await limiter.peek('k')).policies.map((p) => p.remaining)).toEqual([3, 5, 4])
  })

  it.each(PAIRS)('%s + %s: waiting out Retry-After passes; 1 ms less is refused', async (a, b) => {
    let now = 1_800_000_000_000
    const limits = [spec(a, 3, 1000, 4), spec(b, 5, 3000, 2)]
    const limiter = limiterOn(makeStore(), limits, () => now)
    // a busy client: requests every 70 ms until refused, then wait exactly as told
    let refused: Decision | undefined
    for (let i = 0; i < 40 && refused === undefined; i++) {
      const d = await limiter.consume('k')
      if (!d.allowed) refused = d
      else now += 70
    }
    expect(refused).toBeDefined()
    const wait = (refused as Decision).retryAfterMs
    expect(wait).toBe(
      Math.max(
        ...(refused as Decision).policies.filter((p) => !p.allowed).map((p) => p.retryAfterMs),
      ),
    )
    const exact = a !== 'sliding-window' && b !== 'sliding-window'
    if (exact && wait > 1) {
      now += wait - 1
      expect((await limiter.peek('k')).allowed, 'refused 1 ms before Retry-After').toBe(false)
      now += 1
    } else now += wait
    expect((await limiter.consume('k')).allowed, 'admitted at Retry-After').toBe(true)
  })
})

// What Redis holds for a key: its value (DUMP, exact bytes) and absolute expiry.
async function heldState(client: Redis | Cluster, keys: readonly string[]) {
  return Promise.all(
    keys.map(async (key) => [key, await client.dumpBuffer(key), await client.pexpiretime(key)]),
  )
}

describe.each([
  ['standalone', () => redis.client as Redis | Cluster],
  ['Cluster', () => cluster.client as Redis | Cluster],
])('all or nothing on Redis (%s)', (_name, client) => {
  it.each(PAIRS)(
    '%s + %s: a request one policy refuses leaves every key byte-identical',
    async (a, b) => {
      const prefix = `aon${unique++}:`
      const store = new RedisStore({ client: client() })
      // each side in turn is the one that refuses (limit 1) while the other has room (limit 50)
      for (const [side, tight, roomy] of [
        [1, a, b],
        [2, b, a],
      ] as const) {
        const limiter = createLimiter({
          limits: [
            { ...spec(tight, 1, 60_000), name: 'tight' },
            { ...spec(roomy, 50, 60_000), name: 'roomy' },
          ],
          prefix: `${prefix}${side}:`,
          store,
          blockedCache: false,
        })
        expect((await limiter.consume('user')).allowed).toBe(true)
        const keys = (await scanKeys(client(), `${prefix}${side}:*`)).sort()
        // one key per policy, or one for both
        expect(keys).toHaveLength(PACKED.has(a) && PACKED.has(b) ? 1 : 2)
        const before = await heldState(client(), keys)
        const refused = await limiter.consume('user')
        expect(refused.allowed).toBe(false)
        expect(refused.policies.map((p) => p.allowed)).toEqual([false, true])
        expect(refused.policies[1]?.remaining).toBe(49)
        expect(await heldState(client(), keys)).toEqual(before)
      }
    },
  )
})

describe.each([
  ['standalone', () => redis.client as Redis | Cluster],
  ['Cluster', () => cluster.client as Redis | Cluster],
])('one key per set on Redis (%s)', (_name, client) => {
  const limits = [
    { name: 'second', limit: 4, window: '10s', burst: 5 },
    { name: 'day', limit: 3, window: '1d', algorithm: 'fixed-window' as const },
  ]
  it('one turn of decisions, keys repeated back to back, admits exactly what the limits allow', async () => {
    const prefix = `pk${unique++}:`
    const limiter = createLimiter({ limits, prefix, store: new RedisStore({ client: client() }) })
    const keys = ['a', 'a', 'a', 'b', 'a', 'b', 'b', 'b', 'a', 'c']
    const decisions = await Promise.all(keys.map((key) => limiter.consume(key)))
    const admitted = (key: string) =>
      decisions.filter((d, i) => keys[i] === key && d.allowed).length
    expect([admitted('a'), admitted('b'), admitted('c')]).toEqual([3, 3, 1])
    // in order: each key's decisions count down, all or nothing
    expect(
      decisions.filter((_, i) => keys[i] === 'a').map((d) => d.policies[1]?.remaining),
    ).toEqual([2, 1, 0, 0, 0])
    expect((await scanKeys(client(), `${prefix}*`)).sort()).toEqual([
      `${prefix}second:gc:+day:fw:{a}`,
      `${prefix}second:gc:+day:fw:{b}`,
      `${prefix}second:gc:+day:fw:{c}`,
    ])
    await limiter.reset('a')
    expect((await limiter.peek('a')).policies.map((p) => p.remaining)).toEqual([5, 3])
    expect(await scanKeys(client(), `${prefix}*{a}*`)).toEqual([])
  })

  it('block, penalize and peek act on the one key', async () => {
    const prefix = `pk${unique++}:`
    const limiter = createLimiter({ limits, prefix, store: new RedisStore({ client: client() }) })
    await limiter.penalize('k', 2)
    expect((await limiter.peek('k')).policies.map((p) => p.remaining)).toEqual([3, 1])
    await limiter.block('k', 60_000)
    const blocked = await limiter.consume('k')
    expect(blocked.allowed).toBe(false)
    expect(blocked.retryAfterMs).toBeGreaterThan(50_000)
    // the block lives beside the set's one key; the block marker of that key's namespace (on
    // a Cluster, of its slot) lives as long
    const namespace = `${prefix}second:gc:+day:fw:`
    const marker = `${namespace}blocked${client() instanceof Cluster ? `{${slotTag(keySlot('k'))}}` : ''}`
    expect((await scanKeys(client(), `${prefix}*`)).sort()).toEqual([
      marker,
      `${namespace}{k}`,
      `${namespace}{k}:block`,
    ])
    expect(await client().pexpiretime(marker)).toBe(
      await client().pexpiretime(`${namespace}{k}:block`),
    )
    // reset lifts the block; the marker only says where to look, and expires with the block
    await limiter.reset('k')
    expect(await scanKeys(client(), `${prefix}*`)).toEqual([marker])
    expect((await limiter.consume('k')).allowed).toBe(true)
  })
})

describe('Lua vs TypeScript twins, several policies', () => {
  const specArb = fc
    .record({
      algorithm: fc.constantFrom(...ALGORITHMS),
      limit: fc.integer({ min: 1, max: 8 }),
      windowMs: fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 41, max: 4000 })),
      burstExtra: fc.integer({ min: -3, max: 6 }),
      retryAfterMs: fc.integer({ min: 1, max: 3000 }),
    })
    .map(({ algorithm, limit, windowMs, burstExtra, retryAfterMs }) =>
      spec(algorithm, limit, windowMs, Math.max(1, limit + burstExtra), retryAfterMs),
    )
  const opArb = fc.oneof(
    {
      weight: 10,
      arbitrary: fc.record({
        kind: fc.constant('consume' as const),
        advanceMs: fc.oneof(
          fc.constant(0),
          fc.integer({ min: 1, max: 50 }),
          fc.integer({ min: 1, max: 5000 }),
        ),
        key: fc.integer({ min: 0, max: 1 }),
        cost: fc.integer({ min: 0, max: 6 }),
        // the consume's own wait cap (consume's `maxDelay`), mostly none
        maxDelay: fc.option(fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 4000 })), {
          nil: undefined,
          freq: 2,
        }),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('refund' as const),
        advanceMs: fc.integer({ min: 0, max: 200 }),
        key: fc.integer({ min: 0, max: 1 }),
        cost: fc.integer({ min: 1, max: 6 }),
        exact: fc.boolean(),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('release' as const),
        advanceMs: fc.integer({ min: 0, max: 200 }),
        key: fc.integer({ min: 0, max: 1 }),
        cost: fc.constant(1),
        exact: fc.constant(true),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('penalize' as const),
        advanceMs: fc.integer({ min: 0, max: 200 }),
        key: fc.integer({ min: 0, max: 1 }),
        cost: fc.integer({ min: 1, max: 20 }),
        exact: fc.constant(false),
      }),
    },
    {
      weight: 1,
      // cost: the block's duration
      arbitrary: fc.record({
        kind: fc.constant('block' as const),
        advanceMs: fc.integer({ min: 0, max: 200 }),
        key: fc.integer({ min: 0, max: 1 }),
        cost: fc.integer({ min: 1, max: 6000 }),
        exact: fc.constant(false),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('reset' as const),
        advanceMs: fc.integer({ min: 0, max: 200 }),
        key: fc.integer({ min: 0, max: 1 }),
        cost: fc.constant(0),
        exact: fc.constant(false),
      }),
    },
  )
  const caseArb = fc.tuple(
    fc.uniqueArray(specArb, {
      minLength: 1,
      maxLength: 3,
      selector: byDefaultName,
    }),
    fc.array(opArb, { minLength: 1, maxLength: 40 }),
    fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
  )

  type Op = typeof opArb extends fc.Arbitrary<infer O> ? O : never
  // Runs random traffic through a MemoryStore limiter and a RedisStore one (`options` added to
  // both), comparing every decision and a peek after each step. `later`: before op `at`, both
  // limiters are built anew with `limits` (the same names: the same state, new numbers).
  const differential = (
    client: () => Redis | Cluster,
    cases: fc.Arbitrary<
      readonly [
        readonly LimitSpec[],
        readonly Op[],
        number,
        Pick<LimiterStoreOptions, 'maxDelay' | 'delayAfter'>,
        { at: number; limits: readonly LimitSpec[] }?,
      ]
    >,
  ) =>
    fc.assert(
      fc.asyncProperty(cases, async ([limits, ops, start, extra, later]) => {
        let now = start
        const clock = () => now
        const name = `twin${unique++}`
        const memory = new MemoryStore()
        const redisStore = new RedisStore({ client: client() })
        const build = (specs: readonly LimitSpec[]) => {
          const options = { limits: specs, name, blockedCache: false as const, ...extra }
          return [
            createLimiter(withClock({ ...options, store: memory }, clock)),
            createLimiter(withClock({ ...options, store: redisStore }, clock)),
          ] as const
        }
        let [a, b] = build(limits)
        let maxCost = Math.min(...a.policies.map((p) => p.burst))
        const last = new Map<number, [Decision, Decision]>()
        try {
          for (const [i, op] of ops.entries()) {
            if (later !== undefined && i === later.at) {
              ;[a, b] = build(later.limits)
              maxCost = Math.min(...a.policies.map((p) => p.burst))
              last.clear()
            }
            now += op.advanceMs
            const key = `k${op.key}`
            const cost = Math.min(op.cost, maxCost)
            if (op.kind === 'consume') {
              const options = op.maxDelay === undefined ? undefined : { maxDelay: op.maxDelay }
              const [da, db] = await Promise.all([
                a.consume(key, cost, options),
                b.consume(key, cost, options),
              ])
              expect(numbers(db), `step ${i}: ${JSON.stringify(op)}`).toEqual(numbers(da))
              if (da.allowed && cost > 0) last.set(op.key, [da, db])
            } else if (op.kind === 'release') {
              const taken = last.get(op.key)
              if (taken !== undefined) {
                await a.release(key, taken[0])
                await b.release(key, taken[1])
              }
            } else if (op.kind === 'penalize') {
              if (a.policies.every((p) => p.algorithm === 'concurrency')) {
                await expect(a.penalize(key, op.cost)).rejects.toThrow(/only concurrency/)
                await expect(b.penalize(key, op.cost)).rejects.toThrow(/only concurrency/)
              } else {
                const [da, db] = await Promise.all([
                  a.penalize(key, op.cost),
                  b.penalize(key, op.cost),
                ])
                expect(numbers(db), `step ${i}: ${JSON.stringify(op)}`).toEqual(numbers(da))
              }
            } else if (op.kind === 'block') {
              await Promise.all([a.block(key, op.cost), b.block(key, op.cost)])
            } else if (op.kind === 'reset') {
              await Promise.all([a.reset(key), b.reset(key)])
            } else {
              const taken = op.exact ? last.get(op.key) : undefined
              await a.refund(key, Math.min(cost, maxCost), taken?.[0])
              await b.refund(key, Math.min(cost, maxCost), taken?.[1])
            }
            const [pa, pb] = await Promise.all([a.peek(key), b.peek(key)])
            expect(numbers(pb), `peek after step ${i}`).toEqual(numbers(pa))
          }
        } finally {
          await memory.close()
        }
      }),
      { numRuns: 50 },
    )

  const CLIENTS: ReadonlyArray<[string, () => Redis | Cluster]> = [
    ['standalone', () => redis.client as Redis | Cluster],
    ['Cluster', () => cluster.client as Redis | Cluster],
  ]

  it.each(CLIENTS)(
    'decide alike on %s: every decision, policies included, after random traffic',
    (_n, client) =>
      differential(
        client,
        caseArb.map(([l, o, t]) => [l, o, t, {}] as const),
      ),
  )

  // Sets of 2 or 3 gcra-family and fixed-window policies: one key holds them all (the
  // packed-limits script, and MemoryStore's twin of it).
  const packedArb = fc.tuple(
    fc.uniqueArray(
      specArb.filter((s) => PACKED.has(s.algorithm as Algorithm)),
      { minLength: 2, maxLength: 3, selector: (s) => JSON.stringify(s) },
    ),
    fc.array(opArb, { minLength: 1, maxLength: 40 }),
    fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
  )
  it.each(CLIENTS)('decide alike on %s with the packed layout (one key per set)', (_n, client) =>
    differential(
      client,
      packedArb.map(([l, o, t]) => [l, o, t, {}] as const),
    ),
  )

  // The same sets, each policy's numbers changed part way (names and algorithms kept, so the
  // one key carries over): a shorter fixed window, a lower limit, a new gcra rate, read from
  // state the old numbers wrote (packed-limits' "as read" write-back included). Only the packed
  // layout: its key expires when every policy is empty, under any numbers; a sliding window's
  // key expires after its old window, which MemoryStore keeps to on this clock and this test's
  // Redis (its keys outlive the clock) does not. twins.test.ts changes each algorithm's numbers
  // against twins without expiry.
  const changedArb = packedArb.chain(([limits, ops, start]) =>
    fc
      .tuple(
        fc.array(
          fc.record({
            limit: fc.integer({ min: 1, max: 8 }),
            windowMs: fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 41, max: 4000 })),
            burstExtra: fc.integer({ min: -3, max: 6 }),
          }),
          { minLength: limits.length, maxLength: limits.length },
        ),
        fc.integer({ min: 0, max: ops.length - 1 }),
      )
      .map(([numbers, at]) => {
        const named = limits.map((s, i) => ({ ...s, name: `p${i}` }))
        const changed = named.map((s, i) => {
          const { limit, windowMs, burstExtra } = numbers[i] as (typeof numbers)[number]
          const algorithm = s.algorithm as Algorithm
          return {
            ...spec(algorithm, limit, windowMs, Math.max(1, limit + burstExtra)),
            name: `p${i}`,
          }
        })
        return [named, ops, start, {}, { at, limits: changed }] as const
      }),
  )
  it.each(CLIENTS)(
    'decide alike on %s with the packed layout when the numbers change between requests',
    (_n, client) => differential(client, changedArb),
  )

  // Waiting: policies that reserve (and concurrency ones beside them) under random maxDelay and
  // delayAfter, so reservations at a common time are compared too.
  const waitingArb = fc
    .tuple(
      fc.uniqueArray(
        fc
          .record({
            algorithm: fc.constantFrom<Algorithm>(
              'gcra',
              'token-bucket',
              'leaky-bucket',
              'concurrency',
            ),
            limit: fc.integer({ min: 1, max: 8 }),
            windowMs: fc.integer({ min: 1, max: 3000 }),
            burst: fc.integer({ min: 1, max: 8 }),
            retryAfterMs: fc.integer({ min: 1, max: 3000 }),
          })
          .map(({ algorithm, limit, windowMs, burst, retryAfterMs }) =>
            spec(algorithm, limit, windowMs, burst, retryAfterMs),
          ),
        { minLength: 1, maxLength: 3, selector: byDefaultName },
      ),
      fc.array(opArb, { minLength: 1, maxLength: 40 }),
      fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
      fc.integer({ min: 1, max: 4000 }),
      fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
    )
    .filter(([limits]) => limits.some((l) => l.algorithm !== 'concurrency'))
    .map(
      ([limits, ops, start, maxDelay, delayAfter]) =>
        [
          limits,
          ops,
          start,
          {
            maxDelay,
            delayAfter:
              delayAfter === undefined
                ? undefined
                : Math.min(
                    delayAfter,
                    ...limits
                      .filter((l) => l.algorithm !== 'concurrency')
                      .map((l) => l.burst ?? l.limit),
                  ),
          },
        ] as const,
    )

  it.each(CLIENTS)('decide alike on %s with maxDelay and delayAfter', (_n, client) =>
    differential(client, waitingArb),
  )
})

describe('failure modes and the blocked-key cache', () => {
  const limits = [
    { name: 'second', limit: 2, window: '1s' },
    { name: 'day', limit: 100, window: '1d', algorithm: 'fixed-window' as const },
  ]
  const deadStore = async () =>
    new RedisStore({
      client: new Redis(await freePort(), '127.0.0.1', { maxRetriesPerRequest: 0 }),
    })

  it("'open' and 'closed' answer for every policy, counting nothing", async () => {
    for (const failureMode of ['open', 'closed'] as const) {
      const limiter = createLimiter({
        limits,
        store: await deadStore(),
        failureMode,
        onError: () => {},
      })
      const d = await limiter.consume('k')
      expect(d.source).toBe(failureMode === 'open' ? 'fail-open' : 'fail-closed')
      expect(d.policies.map((p) => [p.name, p.allowed])).toEqual([
        ['second', failureMode === 'open'],
        ['day', failureMode === 'open'],
      ])
    }
  })

  it("'local' decides every policy in process, all or nothing", async () => {
    const limiter = createLimiter({
      limits,
      store: await deadStore(),
      failureMode: 'local',
      onError: () => {},
    })
    const decisions = []
    for (let i = 0; i < 3; i++) decisions.push(await limiter.consume('k'))
    expect(decisions.map((d) => [d.source, d.allowed])).toEqual([
      ['local', true],
      ['local', true],
      ['local', false],
    ])
    expect(decisions[2]?.policies.map((p) => [p.allowed, p.remaining])).toEqual([
      [false, 0],
      [true, 98],
    ])
  })

  it('a refusal is remembered with its policies, and the refused policy named', async () => {
    const limiter = createLimiter({
      limits: [
        { name: 'tight', limit: 1, window: '1h', algorithm: 'fixed-window' },
        { name: 'roomy', limit: 100, window: '1h', algorithm: 'fixed-window' },
      ],
      prefix: `bc${unique++}:`,
      store: new RedisStore({ client: redis.client }),
    })
    await limiter.consume('k')
    const fromStore = await limiter.consume('k')
    const cached = await limiter.consume('k')
    expect(fromStore.source).toBe('store')
    expect(cached.source).toBe('blocked-cache')
    expect(cached.allowed).toBe(false)
    expect(cached.policies.map((p) => [p.name, p.allowed, p.remaining])).toEqual([
      ['tight', false, 0],
      ['roomy', true, 99],
    ])
    expect(cached.retryAfterMs).toBeLessThanOrEqual(fromStore.retryAfterMs)
    expect(cached.retryAfterMs).toBeGreaterThan(fromStore.retryAfterMs - 1000)
  })
})
