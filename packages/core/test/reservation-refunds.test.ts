// Refunds of reservations under `maxDelay` / `delayAfter` (gcra, token-bucket, leaky-bucket):
// a waiting client that gives up must never hand its slot to two others. Whatever sequence of
// reservations and aborts (refunds of reservations still waiting), the admissions that were
// kept never exceed the policy's bound in any window, by the time they are due (now + delayMs).
//
// The bound: a waiting GCRA admits a request when it conforms with tolerance (after - 1) x T
// (T = window / limit, `after` the limiter's `delayAfter`, default `burst`), at the exact time
// x = max(now, TAT + cost x T - after x T); the TAT then is x + after x T or more. For requests
// k..m (costs at most `after`) that gives S x T <= x_m - x_k + after x T, S their total cost
// (with a cost c above `after` among them, c in place of `after`).
// Due times are x rounded up to whole ms, so due times within a window [a, a + window) come
// from exact times less than `window` apart: S x T < window + after x T, so S < limit + after,
// and S <= limit + after - 1. With burst 1: at most `limit` per window, as the README promises.
// A refund that gives back exactly the tail reservation leaves the TAT as if it had never been
// made, so the kept admissions are a GCRA schedule of their own and the bound holds for them.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  createLimiter,
  type Decision,
  type Limiter,
  type LimiterOptions,
  RedisStore,
  type Store,
} from '../src/index.js'
import { withClock } from '../src/testing/index.js'
import { CLIENTS, withStandalone } from './setup/clients.js'
import { useRedis } from './setup/redis.js'
import { storeCases } from './setup/stores.js'

const redis = useRedis()
let unique = 0

const STORES = storeCases(redis)
const WAITING = ['gcra', 'token-bucket', 'leaky-bucket'] as const

// 10 per second, burst 1, waiting up to 1 s: slots every 100 ms (on `clock`, when given).
function tenPerSecond(
  store: Store,
  clock?: () => number,
  algorithm: (typeof WAITING)[number] = 'gcra',
): Limiter {
  const options: LimiterOptions = {
    algorithm,
    limit: 10,
    window: '1s',
    burst: 1,
    maxDelay: '1s',
    name: `rr${unique++}`,
    store,
  }
  return createLimiter(clock === undefined ? options : withClock(options, clock))
}

/** An admission the test keeps track of: when it is due, its cost, its decision. */
interface Admission {
  readonly dueMs: number
  readonly cost: number
  readonly decision: Decision
  refunded: boolean
}

/** The most total cost of kept admissions due within any window [a, a + windowMs). */
function mostInWindow(admissions: readonly Admission[], windowMs: number): number {
  const kept = admissions.filter((a) => !a.refunded).sort((x, y) => x.dueMs - y.dueMs)
  let most = 0
  let sum = 0
  let from = 0
  for (const a of kept) {
    sum += a.cost
    while ((kept[from] as Admission).dueMs <= a.dueMs - windowMs) {
      sum -= (kept[from] as Admission).cost
      from++
    }
    most = Math.max(most, sum)
  }
  return most
}

/**
 * The repro of issue 24 (3): gcra 10/s, burst 1, maxDelay 1 s. A client sends a batch of 12
 * every `stepMs` and gives up on all but the last admitted of each batch (refunding them, first
 * to last). Returns every admission.
 */
async function abortAllButLast(
  limiter: Limiter,
  clock: { now: number },
  stepMs: number,
): Promise<Admission[]> {
  const kept: Admission[] = []
  for (let round = 0; round < 20; round++) {
    const batch: Admission[] = []
    for (let i = 0; i < 12; i++) {
      const decision = await limiter.consume('k')
      if (decision.allowed)
        batch.push({ dueMs: clock.now + decision.delayMs, cost: 1, decision, refunded: false })
    }
    for (const a of batch.slice(0, -1)) {
      await limiter.refund('k', 1, a.decision)
      a.refunded = true
    }
    kept.push(...batch)
    clock.now += stepMs
  }
  return kept
}

describe.each(STORES)('%s', (_name, makeStore) => {
  it.each(WAITING.flatMap((algorithm) => [50, 5].map((stepMs) => [algorithm, stepMs] as const)))(
    '%s, a batch every %i ms: aborting all but the last of each admits at most 10 in any second',
    async (algorithm, stepMs) => {
      const clock = { now: 1_800_000_000_000 }
      const limiter = tenPerSecond(makeStore(), () => clock.now, algorithm)
      const admissions = await abortAllButLast(limiter, clock, stepMs)
      // (before the fix: 20 in a second with a batch every 50 ms, 11 in 100 ms every 5 ms)
      expect(mostInWindow(admissions, 1000)).toBeLessThanOrEqual(10)
      expect(mostInWindow(admissions, 100)).toBeLessThanOrEqual(1)
      // the price: an aborted waiter's slot stays spent unless it was the tail. The first batch
      // takes the 11 slots of [0, 1 s] and keeps one; after it, one slot frees every 100 ms
      const kept = admissions.filter((a) => !a.refunded).length
      expect(kept).toBe(stepMs === 50 ? 10 : 1)
    },
  )

  it('acquire: waiters that abort give back no slot another still waits behind', async () => {
    const limiter = tenPerSecond(makeStore())
    // 11 at once: one goes now, the others wait 100 ms to 1 s; all but the first and last give up
    const controllers = Array.from({ length: 11 }, () => new AbortController())
    const waiting = controllers.map((c) => limiter.acquire('k', { signal: c.signal }))
    for (const c of controllers.slice(1, 10)) c.abort(new Error('gone'))
    const settled = await Promise.allSettled(waiting.slice(0, 10))
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', ...Array(9).fill('rejected')])
    // the last still waits for its slot, about 1 s after the start: the next request could
    // have only the slot after it (1.1 s, past maxDelay: refused until it can reserve it), not
    // one of those given back (before the fix: a wait of about 200 ms)
    const next = await limiter.peek('k')
    expect(next.allowed ? next.delayMs : next.retryAfterMs).toBeGreaterThan(500)
    ;(controllers[10] as AbortController).abort(new Error('gone too'))
    await expect(waiting[10]).rejects.toThrow('gone too')
  })

  it('a refund of the tail gives its slot back; of any other reservation, nothing', () =>
    tailOnly(makeStore()))

  it.each([
    ['as their admissions arrive', 0],
    ['while they wait out their delays', 50],
  ])(
    'acquire: waiters sharing one signal that aborts %s give every reservation back',
    async (_when, sleepMs) => {
      const limiter = tenPerSecond(makeStore())
      const first = await limiter.acquire('k')
      expect(first.delayMs).toBe(0)
      // nine wait 100 ms to 900 ms for their slots, on one signal (a request's, say)
      const controller = new AbortController()
      const waiting = Array.from({ length: 9 }, () =>
        limiter.acquire('k', { signal: controller.signal }),
      )
      await until(async () => {
        const d = await limiter.peek('k')
        return (d.allowed ? d.delayMs : d.retryAfterMs) >= 900
      })
      await new Promise((r) => setTimeout(r, sleepMs))
      controller.abort(new Error('gone'))
      const settled = await Promise.allSettled(waiting)
      expect(settled.every((s) => s.status === 'rejected')).toBe(true)
      // given back newest first, each the tail in turn: the next request waits only for the slot
      // after the first admission (before: every refund but the last was mid-queue, ~900 ms)
      const next = await limiter.peek('k')
      expect(next.allowed).toBe(true)
      expect(next.delayMs).toBeLessThanOrEqual(100 - sleepMs)
    },
  )
})

// Resolves once `check` holds (polled every 5 ms, for at most 5 s).
async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1000 && !(await check()); i++) await new Promise((r) => setTimeout(r, 5))
}

// Four requests at once (slots 0, 100, 200 and 300 ms), refunded out of order.
async function tailOnly(store: Store): Promise<void> {
  const clock = { now: 1_800_000_000_000 }
  const limiter = tenPerSecond(store, () => clock.now)
  const delays: number[] = []
  const decisions: Decision[] = []
  for (let i = 0; i < 4; i++) {
    const d = await limiter.consume('k')
    decisions.push(d)
    delays.push(d.delayMs)
  }
  expect(delays).toEqual([0, 100, 200, 300])
  // the one waiting 100 ms gives up: others hold later slots, so its slot stays spent
  await limiter.refund('k', 1, decisions[1])
  expect((await limiter.peek('k')).delayMs).toBe(400)
  // the tail gives up: the next request takes its slot
  await limiter.refund('k', 1, decisions[3])
  expect((await limiter.peek('k')).delayMs).toBe(300)
  // now the one waiting 200 ms is the tail again
  await limiter.refund('k', 1, decisions[2])
  expect((await limiter.peek('k')).delayMs).toBe(200)
  // a refund without its decision while others wait gives nothing: the tail is theirs
  await limiter.refund('k', 1)
  expect((await limiter.peek('k')).delayMs).toBe(200)
  // and a refund of an admission that did not wait, once nobody waits, gives its cost back
  clock.now += 1000
  const atOnce = await limiter.consume('k')
  expect(atOnce.delayMs).toBe(0)
  expect((await limiter.peek('k')).delayMs).toBe(100)
  await limiter.refund('k', 1, atOnce)
  expect((await limiter.peek('k')).delayMs).toBe(0)
}

// Every client library reads a reservation's ticket from the reply the same way.
describe.each(CLIENTS)('RedisStore on $name', (factory) => {
  it('a refund of the tail gives its slot back; of any other reservation, nothing', () =>
    withStandalone(factory, redis.server.port, (client) => tailOnly(new RedisStore({ client }))))
})

// One random run: a sequence of reservations and aborts on an injected clock.
type Step =
  | {
      readonly kind: 'reserve'
      readonly advanceMs: number
      readonly cost: number
      readonly n: number
    }
  | { readonly kind: 'abort'; readonly advanceMs: number; readonly pick: number }
  // a request that gives up as soon as it is answered: its refund must leave the key as it was
  | { readonly kind: 'undo'; readonly advanceMs: number; readonly cost: number }

const configArb = fc.record({
  algorithm: fc.constantFrom(...WAITING),
  limit: fc.integer({ min: 1, max: 12 }),
  windowMs: fc.oneof(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 51, max: 3000 })),
  burst: fc.integer({ min: 1, max: 5 }),
  delayAfter: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
  // maxDelay, in tenths of the window (absent: delayAfter alone, or maxDelay one window)
  maxDelayTenths: fc.option(fc.integer({ min: 8, max: 40 }), { nil: undefined }),
  // a second, slower GCRA policy: the requests then wait for both, together (the `limits` path)
  second: fc.option(
    fc.record({
      limit: fc.integer({ min: 1, max: 6 }),
      windowMs: fc.integer({ min: 1, max: 4000 }),
    }),
    { nil: undefined },
  ),
})
type Config = typeof configArb extends fc.Arbitrary<infer C> ? C : never

function stepsArb(windowMs: number, limit: number): fc.Arbitrary<Step[]> {
  // mostly less than one interval (T = window / limit) on: requests queue up
  const advance = fc.oneof(
    { weight: 5, arbitrary: fc.constant(0) },
    { weight: 4, arbitrary: fc.integer({ min: 1, max: Math.max(1, Math.ceil(windowMs / limit)) }) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: windowMs * 2 }) },
  )
  const step: fc.Arbitrary<Step> = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('reserve' as const),
        advanceMs: advance,
        cost: fc.integer({ min: 1, max: 3 }),
        // how many at this instant: a queue builds up in a few steps
        n: fc.integer({ min: 1, max: limit + 2 }),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('abort' as const),
        advanceMs: advance,
        pick: fc.nat(),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('undo' as const),
        advanceMs: advance,
        cost: fc.integer({ min: 1, max: 3 }),
      }),
    },
  )
  return fc.array(step, { minLength: 1, maxLength: 80 })
}

const runArb = configArb.chain((c) => fc.tuple(fc.constant(c), stepsArb(c.windowMs, c.limit)))

function limiterFor(config: Config, store: Store, clock: () => number): Limiter {
  const { algorithm, limit, windowMs, burst, second } = config
  const delayAfter =
    config.delayAfter === undefined ? undefined : Math.min(config.delayAfter, burst)
  // delayAfter alone waits only within the burst: give it some room
  const maxDelay =
    config.maxDelayTenths !== undefined
      ? Math.ceil((windowMs * config.maxDelayTenths) / 10)
      : delayAfter === undefined
        ? windowMs
        : undefined
  const waiting = { delayAfter, maxDelay }
  const name = `rp${unique++}`
  const options: LimiterOptions =
    second === undefined
      ? { algorithm, limit, window: windowMs, burst, ...waiting, name, store }
      : {
          limits: [
            { name: 'a', algorithm, limit, window: windowMs, burst },
            { name: 'b', algorithm: 'gcra', limit: second.limit, window: second.windowMs, burst },
          ],
          ...waiting,
          name,
          store,
        }
  return createLimiter(withClock(options, clock))
}

// The bound of each policy: limit + max(after, the largest cost) - 1 in any window of its
// length (after: delayAfter, default burst).
function checkBounds(limiter: Limiter, admissions: readonly Admission[]): void {
  for (const policy of limiter.policies) {
    const after = Math.max(policy.delayAfter ?? policy.burst, ...admissions.map((a) => a.cost))
    const most = mostInWindow(admissions, policy.windowMs)
    expect(
      most,
      `${policy.name}: ${policy.limit} per ${policy.windowMs} ms, after ${after}`,
    ).toBeLessThanOrEqual(policy.limit + after - 1)
  }
}

async function run(config: Config, steps: readonly Step[], store: Store): Promise<void> {
  let now = 1_700_000_000_000
  const limiter = limiterFor(config, store, () => now)
  const admissions: Admission[] = []
  for (const step of steps) {
    now += step.advanceMs
    if (step.kind === 'reserve') {
      // a cost above burst can never pass (consume rejects it)
      const cost = Math.min(step.cost, config.burst)
      for (let i = 0; i < step.n; i++) {
        const decision = await limiter.consume('k', cost)
        // decided by the store (Redis may answer a refusal from its blocked-key cache)
        expect(['store', 'blocked-cache']).toContain(decision.source)
        if (decision.allowed)
          admissions.push({ dueMs: now + decision.delayMs, cost, decision, refunded: false })
      }
    } else if (step.kind === 'undo') {
      await undo(limiter, Math.min(step.cost, config.burst))
    } else {
      // a client still waiting for its slot gives up
      const waiting = admissions.filter((a) => !a.refunded && a.dueMs > now)
      const gone = waiting[step.pick % Math.max(1, waiting.length)]
      if (gone !== undefined) {
        await limiter.refund('k', gone.cost, gone.decision)
        gone.refunded = true
      }
    }
  }
  checkBounds(limiter, admissions)
}

// What a peek shows of every policy.
const shown = (d: Decision) => [
  d.allowed,
  d.delayMs,
  ...d.policies.map((p) => [p.allowed, p.remaining, p.resetMs, p.retryAfterMs]),
]

// An admission refunded in full at once is the tail of every policy's queue: the refund leaves
// each as it was before it, a gap its wait left included (another policy's longer wait, a cost
// above delayAfter). (Before the fix: that gap stayed reserved, for nobody.)
async function undo(limiter: Limiter, cost: number): Promise<void> {
  const before = await limiter.peek('k')
  const decision = await limiter.consume('k', cost)
  if (!decision.allowed) return
  await limiter.refund('k', cost, decision)
  const after = await limiter.peek('k')
  if (before.source === 'store' && after.source === 'store')
    expect(shown(after), `cost ${cost}, delayMs ${decision.delayMs}`).toEqual(shown(before))
}

describe.each(STORES)('%s: any reservations and aborts', (_name, makeStore) => {
  it('never admit more than limit + delayAfter - 1 due in any window', async () => {
    const store = makeStore()
    await fc.assert(
      fc.asyncProperty(runArb, ([config, steps]) => run(config, steps, store)),
      { numRuns: Number(process.env.RR_RUNS ?? 300) },
    )
  })
})
