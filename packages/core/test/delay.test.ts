// Waiting instead of refusing (`maxDelay`, `delayAfter`), in memory and on Redis (standalone and
// Cluster), on an injected clock: reservations, honest Retry-After beyond the allowance, several
// policies reserving together, and acquire giving a reservation back on abort.
import { describe, expect, it } from 'vitest'
import { createLimiter, type Decision, type LimiterOptions, RedisStore } from '../src/index.js'
import { withClock } from '../src/testing/index.js'
import { useCluster, useRedis } from './setup/redis.js'
import { storeCases } from './setup/stores.js'

const redis = useRedis()
const cluster = useCluster(3, 0)
let unique = 0

const STORES = storeCases(redis, cluster)

const view = (d: Decision) => `${d.allowed ? 'A' : 'R'}${d.allowed ? d.delayMs : d.retryAfterMs}`

describe('construction', () => {
  it.each(['fixed-window', 'sliding-window', 'sliding-log'] as const)(
    'maxDelay with %s throws, naming both options',
    (algorithm) => {
      // @ts-expect-error maxDelay on a counting algorithm is a type error too
      expect(() => createLimiter({ algorithm, limit: 5, window: '1s', maxDelay: '1s' })).toThrow(
        new RegExp(`\`maxDelay\`.*algorithm '${algorithm}'`),
      )
      expect(() =>
        createLimiter({
          limits: [
            { algorithm: 'gcra', limit: 5, window: '1s' },
            { algorithm, limit: 100, window: '1h' },
          ],
          maxDelay: '1s',
        }),
      ).toThrow(new RegExp(`\`maxDelay\`.*limits\\[1\\]\\.algorithm '${algorithm}'`))
    },
  )

  it('refuses a delayAfter above burst, bad values, and waiting with nothing to reserve in', () => {
    expect(() =>
      createLimiter({ algorithm: 'gcra', limit: 5, window: '1s', burst: 3, delayAfter: 4 }),
    ).toThrow(/`delayAfter`.*at most the burst.*3/)
    expect(() =>
      createLimiter({ algorithm: 'gcra', limit: 5, window: '1s', delayAfter: 0 }),
    ).toThrow(/`delayAfter`/)
    expect(() =>
      createLimiter({ algorithm: 'gcra', limit: 5, window: '1s', maxDelay: 'later' }),
    ).toThrow(/`maxDelay`/)
    expect(() =>
      // @ts-expect-error maxDelay on 'concurrency' is a type error too
      createLimiter({ algorithm: 'concurrency', limit: 5, window: '1s', maxDelay: '1s' }),
    ).toThrow(/`maxDelay`.*acquire/)
    // maxDelay 0 is today's behaviour, written as a number or a string alike (before: '0ms'
    // threw "at least 1" where 0 was taken)
    expect(
      createLimiter({ algorithm: 'fixed-window', limit: 5, window: '1s', maxDelay: 0 }),
    ).toBeDefined()
    for (const none of ['0ms', '0s'] as const) {
      const { policy } = createLimiter({
        algorithm: 'gcra',
        limit: 5,
        window: '1s',
        maxDelay: none,
      })
      expect(policy.waitUnits).toBeUndefined()
    }
    expect(() =>
      createLimiter({ algorithm: 'gcra', limit: 5, window: '1s', maxDelay: '1.5ms' }),
    ).toThrow(
      'Invalid `maxDelay`: must be a whole number of milliseconds, 0 or more (0: no waiting)',
    )
  })
})

describe.each(STORES)('%s', (_name, makeStore) => {
  const make = (options: Partial<LimiterOptions>, clock: () => number) =>
    createLimiter(
      withClock(
        {
          algorithm: 'gcra',
          limit: 10,
          window: '1s',
          burst: 2,
          name: `d${unique++}`,
          store: makeStore(),
          ...options,
        } as LimiterOptions,
        clock,
      ),
    )

  it.each(['gcra', 'token-bucket', 'leaky-bucket'] as const)(
    '%s: burst passes at once, the rest reserve their slots at the rate, up to maxDelay',
    async (algorithm) => {
      let now = 1_800_000_000_000
      const limiter = make({ algorithm, maxDelay: 500 }, () => now)
      const decisions: Decision[] = []
      for (let i = 0; i < 10; i++) decisions.push(await limiter.consume('k'))
      expect(decisions.map(view)).toEqual([
        'A0',
        'A0',
        'A100',
        'A200',
        'A300',
        'A400',
        'A500',
        'R600',
        'R600',
        'R600',
      ])
      // A refusal's Retry-After is when it passes without waiting; maxDelay earlier it can wait.
      now += 100
      expect(view(await limiter.consume('k'))).toBe('A500')
      now += 500
      expect(view(await limiter.consume('k'))).toBe('A100')
    },
  )

  it('delayAfter alone is nginx burst=B delay=N: N at once, the rest of the burst delayed', async () => {
    const now = 1_800_000_000_000
    const limiter = make({ burst: 5, delayAfter: 2 }, () => now)
    const decisions: Decision[] = []
    for (let i = 0; i < 7; i++) decisions.push(await limiter.consume('k'))
    // a refusal waits until it would pass without waiting: 400 ms (it could reserve after 100)
    expect(decisions.map(view)).toEqual(['A0', 'A0', 'A100', 'A200', 'A300', 'R400', 'R400'])
    // remaining counts the burst left, delayed or not
    expect(decisions.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0, 0, 0])
  })

  it('several policies reserve at the longest of their waits; a refund gives it back', async () => {
    let now = 1_800_000_000_000
    const limiter = createLimiter(
      withClock(
        {
          limits: [
            { name: 'fast', algorithm: 'gcra', limit: 10, window: '1s', burst: 1 },
            { name: 'slow', algorithm: 'gcra', limit: 2, window: '1s', burst: 1 },
            { name: 'inflight', algorithm: 'concurrency', limit: 10, window: '1m' },
          ],
          maxDelay: '2s',
          name: `d${unique++}`,
          store: makeStore(),
        },
        () => now,
      ),
    )
    const first = await limiter.consume('k')
    const second = await limiter.consume('k')
    expect(first.delayMs).toBe(0)
    // slow needs 500 ms, fast only 100: both reserve at 500
    expect(second.delayMs).toBe(500)
    const third = await limiter.consume('k')
    expect(third.delayMs).toBe(1000)
    await limiter.refund('k', 1, third)
    now += 1
    expect((await limiter.consume('k')).delayMs).toBe(999)
    expect((await limiter.peek('k')).policies.map((p) => p.remaining)).toEqual([0, 0, 7])
  })

  it('acquire waits its delay; an abort while waiting gives the reservation back', async () => {
    const limiter = createLimiter({
      algorithm: 'gcra',
      limit: 20,
      window: '1s',
      burst: 1,
      maxDelay: '1s',
      name: `d${unique++}`,
      store: makeStore(),
    })
    const start = performance.now()
    await limiter.acquire('k')
    await limiter.acquire('k')
    expect(performance.now() - start).toBeGreaterThanOrEqual(40)
    const controller = new AbortController()
    const waiting = limiter.acquire('k', { signal: controller.signal })
    setTimeout(() => controller.abort(new Error('gone')), 10)
    await expect(waiting).rejects.toThrow('gone')
    // the aborted reservation was refunded: the next one waits one interval, not two
    const next = await limiter.consume('k')
    expect(next.delayMs).toBeLessThanOrEqual(50)
    // beyond maxWait: refused at once, honestly
    const far = await limiter.acquire('k', { maxWait: 1 }).catch((e: unknown) => e)
    expect(far).toMatchObject({ code: 'ERR_LIMITER_REFUSED', decision: { allowed: false } })
    // and its reservation was given back
    expect((await limiter.consume('k')).delayMs).toBeLessThanOrEqual(100)
  })
})

describe('acquire with delayAfter alone', () => {
  it('waits within the burst, as consume would be told to', async () => {
    // burst 4, 2 at once: the rest of the burst waits its turn, so acquire waits for it too
    // (its default maxWait is the wait delayAfter allows, not 0)
    const limiter = createLimiter({
      algorithm: 'gcra',
      limit: 20,
      window: '1s',
      burst: 4,
      delayAfter: 2,
      name: `d${unique++}`,
    })
    const started = performance.now()
    const all = await Promise.all(Array.from({ length: 4 }, () => limiter.acquire('k')))
    // (in memory, each decision reads the clock: a later one may come a millisecond on)
    const delays = all.map((d) => d.delayMs)
    expect(delays.slice(0, 2)).toEqual([0, 0])
    expect(delays[2]).toBeGreaterThanOrEqual(45)
    expect(delays[3]).toBeGreaterThanOrEqual(95)
    expect(delays[3]).toBeLessThanOrEqual(100)
    expect(performance.now() - started).toBeGreaterThanOrEqual(95)
  })
})

describe('blocked-key cache under maxDelay', () => {
  it('trusts a refusal only until the request could pass by waiting', async () => {
    const limiter = createLimiter({
      algorithm: 'gcra',
      limit: 20,
      window: '1s',
      burst: 1,
      maxDelay: 100,
      name: `d${unique++}`,
      store: new RedisStore({ client: redis.client }),
    })
    let refused: Decision | undefined
    for (let i = 0; i < 10 && refused === undefined; i++) {
      const d = await limiter.consume('hot')
      if (!d.allowed) refused = d
    }
    expect(refused).toBeDefined()
    const wait = (refused as Decision).retryAfterMs - 100
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, wait) + 15))
    const later = await limiter.consume('hot')
    expect(later.allowed).toBe(true)
    expect(later.source).toBe('store')
  })
})
