// Fleet reserve on concurrency leases: a class below another may not take the slots kept for
// it. Validation, the ceilings, the 'reserve' reason, and Lua vs TypeScript on random traffic.
import { channel } from 'node:diagnostics_channel'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  createLimiter,
  type Decision,
  type DecisionEvent,
  type Limiter,
  type LimiterOptions,
  MemoryStore,
  RedisStore,
  type Store,
} from '../src/index.js'
import { withClock } from '../src/testing/index.js'
import { useRedis } from './setup/redis.js'
import { storeCases } from './setup/stores.js'

const redis = useRedis()
let run = 0

function limiterOn(store: Store, options: Partial<LimiterOptions>, clock?: () => number): Limiter {
  const o = {
    algorithm: 'concurrency',
    limit: 10,
    window: '1m',
    name: `reserve${run++}`,
    store,
    ...options,
  } as LimiterOptions
  return createLimiter(clock === undefined ? o : withClock(o, clock))
}

describe('reserve: validation at construction', () => {
  const bad: Array<[unknown, RegExp]> = [
    [{ critical: 1 }, /`reserve.critical`.*from 0 to under 1/],
    [{ critical: -0.1 }, /`reserve.critical`/],
    [{ critical: '0.2' }, /`reserve.critical`/],
    [{ urgent: 0.2 }, /`reserve.urgent`.*not a priority class/],
    [{ critical: 0.6, high: 0.4 }, /`reserve`.*sum to under 1/],
    [0.2, /`reserve`.*an object/],
  ]
  it.each(bad)('%j is refused, naming reserve and the value', (reserve, message) => {
    expect(() => limiterOn(new MemoryStore(), { reserve } as never)).toThrow(message)
  })
  it('a rate policy refuses it', () => {
    expect(() =>
      createLimiter({ limit: 5, window: '1s', reserve: { critical: 0.2 } } as never),
    ).toThrow(/`reserve`.*'concurrency' policies only/)
  })
  it('is a compile error, and a runtime one, on a rate algorithm', () => {
    expect(() =>
      // @ts-expect-error `reserve` is for 'concurrency' policies
      createLimiter({ algorithm: 'gcra', limit: 5, window: '1s', reserve: { critical: 0.2 } }),
    ).toThrow(/`reserve`/)
  })
  it('an unknown priority is refused by consume', async () => {
    const limiter = limiterOn(new MemoryStore(), { reserve: { critical: 0.2 } })
    await expect(limiter.consume('k', 1, { priority: 'urgent' as never })).rejects.toThrow(
      /`priority`/,
    )
  })
})

describe.each(storeCases(redis))('reserve on %s', (_name, store) => {
  it('{ critical: 0.2, high: 0.1 } at limit 10: low and normal stop at 7, high at 8, critical at 10', async () => {
    const limiter = limiterOn(store(), { reserve: { critical: 0.2, high: 0.1 } })
    const key = `k${run}`
    const take = async (priority: 'critical' | 'high' | 'normal' | 'low' | number) =>
      (await limiter.consume(key, 1, { priority })).allowed
    let admitted = 0
    for (let i = 0; i < 10; i++) if (await take(i % 2 === 0 ? 'low' : 'normal')) admitted++
    expect(admitted).toBe(7)
    // no priority given: normal
    expect((await limiter.consume(key)).allowed).toBe(false)
    const refused = await limiter.consume(key, 1, { priority: 'low' })
    expect(refused).toMatchObject({ allowed: false, remaining: 3, reason: 'reserve' })
    expect(refused.retryAfterMs).toBeGreaterThan(0)
    expect(JSON.parse(JSON.stringify(refused))).toMatchObject({ reason: 'reserve' })
    expect(await take(5)).toBe(false)
    expect(await take('high')).toBe(true)
    expect(await take(1)).toBe(false)
    expect(await take('critical')).toBe(true)
    expect(await take(0)).toBe(true)
    // full: a refusal at the limit is the client's own, not the reserve's
    const full = await limiter.consume(key, 1, { priority: 'critical' })
    expect(full.allowed).toBe(false)
    expect(full.reason).toBeUndefined()
    // a peek reads the class's ceiling too
    await limiter.release(key, (await limiter.consume(key, 0)) as Decision)
  })

  it('a release makes room for the class again; the lease carries its ceiling', async () => {
    const limiter = limiterOn(store(), { limit: 2, reserve: { critical: 0.5 } })
    const key = `r${run}`
    const first = await limiter.consume(key, 1, { priority: 'low' })
    expect(first.allowed).toBe(true)
    expect((await limiter.consume(key, 1, { priority: 'low' })).reason).toBe('reserve')
    expect((await limiter.peek(key)).allowed).toBe(false)
    const critical = await limiter.consume(key, 1, { priority: 'critical' })
    expect(critical.allowed).toBe(true)
    await limiter.release(key, first)
    expect((await limiter.consume(key, 1, { priority: 'low' })).allowed).toBe(false)
    await limiter.release(key, critical)
    expect((await limiter.consume(key, 1, { priority: 'low' })).allowed).toBe(true)
  })

  it('with several policies: a reserve refusal is marked only when no other policy refused', async () => {
    const limiter = limiterOn(store(), {
      algorithm: undefined,
      limit: undefined,
      window: undefined,
      limits: [
        {
          name: 'flight',
          algorithm: 'concurrency',
          limit: 4,
          window: '1m',
          reserve: { critical: 0.5 },
        },
        { name: 'rate', algorithm: 'fixed-window', limit: 3, window: '1m' },
      ],
    } as never)
    const key = `s${run}`
    expect((await limiter.consume(key, 1, { priority: 'low' })).allowed).toBe(true)
    expect((await limiter.consume(key, 1, { priority: 'low' })).allowed).toBe(true)
    expect((await limiter.consume(key, 1, { priority: 'low' })).reason).toBe('reserve')
    expect((await limiter.consume(key, 1, { priority: 'critical' })).allowed).toBe(true)
    // the rate policy is spent: its refusal is the client's
    const both = await limiter.consume(key, 1, { priority: 'low' })
    expect(both.allowed).toBe(false)
    expect(both.reason).toBeUndefined()
  })
})

describe('limiter:decision events', () => {
  it('carry the priority (normal when none was given)', async () => {
    const seen: DecisionEvent[] = []
    const listener = (m: unknown) => seen.push(m as DecisionEvent)
    channel('limiter:decision').subscribe(listener)
    try {
      const limiter = limiterOn(new MemoryStore(), { limit: 2, reserve: { critical: 0.5 } })
      await limiter.consume('e', 1, { priority: 'low' })
      await limiter.consume('e', 1, { priority: 'low' })
      await limiter.consume('e')
      await limiter.consume('e', 1, { priority: 7 })
      const mine = seen.filter((e) => e.limiter === limiter)
      expect(mine.map((e) => e.priority)).toEqual(['low', 'low', 'normal', 7])
      expect(mine[1]?.decision.reason).toBe('reserve')
    } finally {
      channel('limiter:decision').unsubscribe(listener)
    }
  })
})

// Lua and TypeScript on the same random traffic with priorities, one policy and two.
type Step = { advanceMs: number; key: number; rank: number; cost: number; release: number }
const stepArb = fc.record({
  advanceMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 400 })),
  key: fc.integer({ min: 0, max: 1 }),
  rank: fc.integer({ min: 0, max: 5 }),
  cost: fc.integer({ min: 0, max: 3 }),
  release: fc.integer({ min: -3, max: 3 }),
})
const reserveArb = fc
  .record({
    critical: fc.option(fc.double({ min: 0, max: 0.45, noNaN: true }), { nil: undefined }),
    high: fc.option(fc.double({ min: 0, max: 0.25, noNaN: true }), { nil: undefined }),
    normal: fc.option(fc.double({ min: 0, max: 0.2, noNaN: true }), { nil: undefined }),
  })
  .map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)))

function numbers(d: Decision) {
  const { allowed, limit, remaining, resetMs, retryAfterMs, delayMs, policies, reason } = d
  return { allowed, limit, remaining, resetMs, retryAfterMs, delayMs, policies, reason }
}

async function differential(several: boolean, limit: number, reserve: object, steps: Step[]) {
  let now = 1_700_000_000_000
  const clock = () => now
  const options = several
    ? {
        algorithm: undefined,
        limit: undefined,
        window: undefined,
        limits: [
          { name: 'c', algorithm: 'concurrency', limit, window: 1000, reserve, retryAfter: 300 },
          { name: 'f', algorithm: 'fixed-window', limit: 12, window: 700 },
        ],
      }
    : { limit, window: 1000, reserve, retryAfter: 300 }
  const name = `diff${run++}`
  const memory = new MemoryStore()
  const a = limiterOn(memory, { ...options, name } as never, clock)
  const b = limiterOn(
    new RedisStore({ client: redis.client }),
    { ...options, name } as never,
    clock,
  )
  const taken: Array<[string, Decision, Decision]> = []
  for (const [i, s] of steps.entries()) {
    now += s.advanceMs
    const key = `d${s.key}`
    const cost = Math.min(s.cost, limit)
    const opts = { priority: s.rank }
    const [da, db] = await Promise.all([a.consume(key, cost, opts), b.consume(key, cost, opts)])
    expect(numbers(db), `step ${i} ${JSON.stringify(s)}`).toEqual(numbers(da))
    if (da.allowed && cost > 0) taken.push([key, da, db])
    const back = taken.length - 1 - s.release
    if (s.release >= 0 && back >= 0) {
      const [k, ta, tb] = taken.splice(back, 1)[0] as [string, Decision, Decision]
      await Promise.all([a.release(k, ta), b.release(k, tb)])
    }
  }
  memory.close()
}

describe('Lua and TypeScript agree under a reserve', () => {
  it.each([
    ['one policy', false],
    ['several policies', true],
  ])(
    '%s: same decisions and reasons for random priorities, costs and releases',
    async (_n, several) => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 12 }),
          reserveArb,
          fc.array(stepArb, { minLength: 1, maxLength: 50 }),
          (limit, reserve, steps) => differential(several, limit, reserve, steps),
        ),
        { numRuns: 60 },
      )
    },
  )
})
