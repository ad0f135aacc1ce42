// acquire and the limiter's own wait: callers with less time than maxDelay, called at once, in one
// process or several, ask with their time left as their own maxDelay, so the store reserves no
// slot they would give back; a rate refusal whose slot is further than the time left, or a block
// on a concurrency limiter, refuses at once. Counts and decisions only, never wall-clock speed.
import { describe, expect, it } from 'vitest'
import { createLimiter, type Decision, type Limiter, LimiterError } from '../src/index.js'
import { onDecision } from './setup/decisions.js'
import { useRedis } from './setup/redis.js'
import { storeCases } from './setup/stores.js'

const redis = useRedis()
let unique = 0

/** The decisions `limiter` makes for `key` from now on (every store ask of acquire is one). */
function decisionsOf(limiter: Limiter, key: string): Decision[] {
  const seen: Decision[] = []
  onDecision((told) => {
    if (told.limiter === limiter && told.key === key) seen.push(told.decision)
  })
  return seen
}

/** The error `promise` rejects with (fails the test if it resolves). */
async function rejection(promise: Promise<unknown>): Promise<LimiterError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(LimiterError)
  return error as LimiterError
}

// The README's outbound limiter: 10 a second, one at a time, reservations up to 30 s ahead.
function outbound(store: ReturnType<(typeof STORES)[number][1]>, maxDelay = '30s'): Limiter {
  return createLimiter({
    algorithm: 'gcra',
    limit: 10,
    window: '1s',
    burst: 1,
    maxDelay,
    store,
    name: `acquire-waits${unique++}`,
  })
}

const STORES = storeCases(redis)

describe.each(STORES)('%s', (_name, store) => {
  it('50 concurrent acquire(maxWait: 0) spend one slot, not 50: the next caller waits one', async () => {
    const limiter = outbound(store())
    const key = `burn${unique}`
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, () => limiter.acquire(key, { maxWait: 0 })),
    )
    const admitted = results.filter((r) => r.status === 'fulfilled')
    const codes = results.flatMap((r) =>
      r.status === 'rejected' ? [(r.reason as LimiterError).code] : [],
    )
    // one at once (more only if whole slots' time passed meanwhile, each then admitted too)
    expect(admitted.length).toBeGreaterThanOrEqual(1)
    expect(new Set(codes)).toEqual(new Set(['ERR_LIMITER_REFUSED']))
    // the refused callers' reservations came back: the queue holds at most the one slot
    const next = await limiter.peek(key)
    expect(next.allowed).toBe(true)
    expect(next.delayMs).toBeLessThanOrEqual(100)
    const honest = await limiter.acquire(key, { maxWait: '1s' })
    expect(honest.allowed).toBe(true)
    expect(honest.delayMs).toBeLessThanOrEqual(100)
  })

  it('callers in five processes (five limiters on one store): 50 acquire(maxWait: 0) leave one slot spent', async () => {
    const shared = store()
    const name = `acquire-waits${unique++}`
    // limiters on one store: what processes are to each other (nothing in process shared)
    const processes = [0, 1, 2, 3, 4].map(() =>
      createLimiter({
        algorithm: 'gcra',
        limit: 10,
        window: '1s',
        burst: 1,
        maxDelay: '30s',
        store: shared,
        name,
      }),
    )
    const key = `processes${unique}`
    const seen = processes.map((limiter) => decisionsOf(limiter, key))
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) =>
        (processes[i % 5] as Limiter).acquire(key, { maxWait: 0 }),
      ),
    )
    expect(results.filter((r) => r.status === 'fulfilled').length).toBeGreaterThanOrEqual(1)
    // no admission had a wait: the store reserved nothing for callers that would not wait
    const admissions = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
    expect(admissions.every((d) => d.delayMs === 0)).toBe(true)
    const decided = seen.flat()
    expect(decided).toHaveLength(50)
    expect(decided.filter((d) => d.allowed).every((d) => d.delayMs === 0)).toBe(true)
    // (before: reservations made and given back, each restored only as the queue's tail, left
    // the next caller a wait of about 3 s)
    const next = await (processes[0] as Limiter).peek(key)
    expect(next.delayMs).toBeLessThanOrEqual(100)
  })

  it('short waits aborted while they ask give every slot back', async () => {
    const limiter = outbound(store())
    const key = `abort${unique}`
    const stop = new AbortController()
    const waiting = Array.from({ length: 20 }, () =>
      limiter.acquire(key, { maxWait: 0, signal: stop.signal }),
    )
    stop.abort(new Error('gone'))
    const settled = await Promise.allSettled(waiting)
    expect(settled.every((s) => s.status === 'rejected')).toBe(true)
    // given back in turn (after the store answers: the aborts rejected at once), before the
    // next short caller asks: nothing is left spent, and it goes at once
    const next = await limiter.acquire(key, { maxWait: 0 })
    expect(next.allowed).toBe(true)
    expect(next.delayMs).toBe(0)
  })

  it('a mix of short and long waits: the long waits keep their reservations', async () => {
    const limiter = outbound(store())
    const key = `mix${unique}`
    const seen = decisionsOf(limiter, key)
    const long = Array.from({ length: 5 }, () => limiter.acquire(key, { maxWait: '30s' }))
    const short = Array.from({ length: 20 }, () =>
      limiter.acquire(key, { maxWait: 0 }).then(
        () => 'admitted',
        (e: LimiterError) => e.code,
      ),
    )
    const kept = await Promise.all(long)
    expect(kept.every((d) => d.allowed)).toBe(true)
    const shorts = await Promise.all(short)
    // each caller asked once; the short ones behind a reservation were refused
    expect(seen).toHaveLength(25)
    expect(shorts.filter((s) => s !== 'admitted').every((s) => s === 'ERR_LIMITER_REFUSED')).toBe(
      true,
    )
    // the queue ends no further than the long waits' five slots and one short admission
    const next = await limiter.peek(key)
    expect(next.delayMs).toBeLessThanOrEqual(600)
  })

  it("a rate refusal whose slot is beyond maxWait's time left refuses at once, reserving nothing", async () => {
    const limiter = outbound(store(), '600ms')
    const key = `late${unique}`
    // the next slot about 1.1 s ahead: it can be reserved in about 500 ms, within maxWait, but
    // it is beyond maxWait (margins of 300 ms either way, for a slow machine)
    const penalty = await limiter.penalize(key, 11)
    expect(penalty.retryAfterMs).toBeGreaterThan(1000)
    const seen = decisionsOf(limiter, key)
    const error = await rejection(limiter.acquire(key, { maxWait: 800 }))
    expect(error.code).toBe('ERR_LIMITER_REFUSED')
    expect(error.decision?.allowed).toBe(false)
    // one ask, refused: no sleep, then a reservation made and given back
    expect(seen).toHaveLength(1)
    expect(seen.every((d) => !d.allowed)).toBe(true)
  })

  it('so does one under the default maxWait (maxDelay), whose slot is beyond it', async () => {
    const limiter = outbound(store(), '600ms')
    const key = `default${unique}`
    await limiter.penalize(key, 11) // the next slot about 1.1 s ahead, reservable in ~500 ms
    const seen = decisionsOf(limiter, key)
    const error = await rejection(limiter.acquire(key))
    expect(error.code).toBe('ERR_LIMITER_REFUSED')
    expect(seen).toHaveLength(1)
    expect(seen[0]?.allowed).toBe(false)
  })

  it('a waiter with time enough for its slot sleeps until it can reserve it, then takes it', async () => {
    const limiter = outbound(store(), '300ms')
    const key = `enough${unique}`
    await limiter.penalize(key, 6)
    const seen = decisionsOf(limiter, key)
    const admitted = await limiter.acquire(key, { maxWait: '5s' })
    expect(admitted.allowed).toBe(true)
    // refused, then a reservation (asked when it could be made, so it waits, not refused again)
    expect(seen[0]?.allowed).toBe(false)
    expect(seen.at(-1)?.allowed).toBe(true)
  })

  it('a blocked key on a concurrency-only limiter refuses at once, asking once', async () => {
    const limiter = createLimiter({
      algorithm: 'concurrency',
      limit: 2,
      window: '1m',
      acquire: { maxWait: '3s' },
      store: store(),
      name: `acquire-waits${unique++}`,
    })
    const key = `job${unique}`
    await limiter.block(key, '10m')
    const seen = decisionsOf(limiter, key)
    const error = await rejection(limiter.acquire(key))
    expect(error.code).toBe('ERR_LIMITER_REFUSED')
    expect(error.decision?.retryAfterMs).toBeGreaterThan(60_000)
    expect(seen).toHaveLength(1)
  })

  it('a concurrency refusal with leases held still waits for a release', async () => {
    const limiter = createLimiter({
      algorithm: 'concurrency',
      limit: 1,
      window: '1m',
      store: store(),
      name: `acquire-waits${unique++}`,
    })
    const key = `held${unique}`
    const held = await limiter.consume(key)
    expect(held.allowed).toBe(true)
    const seen = decisionsOf(limiter, key)
    const waiting = limiter.acquire(key, { maxWait: '20s' })
    while (seen.length === 0) await new Promise((resolve) => setImmediate(resolve))
    await limiter.release(key, held)
    const admitted = await waiting
    expect(admitted.allowed).toBe(true)
    await limiter.release(key, admitted)
  })
})
