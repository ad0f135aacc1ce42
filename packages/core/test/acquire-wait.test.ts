// A limiter's default wait for acquire/run (`acquire: { maxWait }`): the README's outbound
// snippet queues its callers as p-limit or Bottleneck would, instead of refusing 6 of 10 at once.
import { describe, expect, it } from 'vitest'
import { createLimiter, LimiterError, type LimiterOptions } from '../src/index.js'
import { useRedis } from './setup/redis.js'
import { sleep, storeCases } from './setup/stores.js'

const redis = useRedis()
let unique = 0

const STORES = storeCases(redis)

describe.each(STORES)('%s', (_name, makeStore) => {
  it("the README's snippet: 10 concurrent run() at limit 4 all succeed, 4 at a time", async () => {
    const store = makeStore()
    let inFlight = 0
    let most = 0
    const callPartner = async () => {
      most = Math.max(most, ++inFlight)
      await sleep(20)
      inFlight--
      return 'ok'
    }
    // as in packages/core/README.md, "Outbound calls"
    const slots = createLimiter({
      algorithm: 'concurrency',
      limit: 4,
      window: '1m',
      acquire: { maxWait: '30s' }, // callers wait for a slot (default: take one now or be refused)
      store,
      prefix: `aw${unique++}:`,
    })
    const results = await Promise.all(
      Array.from({ length: 10 }, () => slots.run('partner-api', () => callPartner())),
    )
    expect(results).toEqual(Array(10).fill('ok'))
    expect(most).toBe(4)
  })

  it('without a wait, the refusal says how to wait; a call’s maxWait beats the default', async () => {
    const make = (options: Partial<LimiterOptions>) =>
      createLimiter({
        algorithm: 'concurrency',
        limit: 1,
        window: '1m',
        store: makeStore(),
        prefix: `aw${unique++}:`,
        ...options,
      } as LimiterOptions)
    const bare = make({})
    await bare.acquire('k')
    const error = await bare.acquire('k').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LimiterError)
    expect(error).toMatchObject({ code: 'ERR_LIMITER_REFUSED' })
    expect((error as Error).message).toContain('within maxWait (0 ms)')
    expect((error as Error).message).toContain(
      'pass { maxWait } to acquire/run, or set acquire: { maxWait } on the limiter',
    )
    const waiting = make({ acquire: { maxWait: '30s' } })
    const held = await waiting.acquire('k')
    await expect(waiting.acquire('k', { maxWait: 0 })).rejects.toMatchObject({
      code: 'ERR_LIMITER_REFUSED',
      message: expect.stringContaining('within maxWait (0 ms)'),
    })
    const next = waiting.acquire('k') // waits, by the limiter's default
    await sleep(20)
    await waiting.release('k', held)
    expect((await next).allowed).toBe(true)
  })
})

describe('acquire.maxWait and maxWait are validated', () => {
  const base = { algorithm: 'concurrency', limit: 1, window: '1m' } as const

  it('at construction, naming acquire.maxWait and the value', () => {
    const bad = (acquire: unknown) => () =>
      createLimiter({ ...base, acquire } as unknown as LimiterOptions)
    expect(bad({ maxWait: -1 })).toThrow(RangeError)
    expect(bad({ maxWait: -1 })).toThrow(
      'Invalid `acquire.maxWait`: must be a whole number of milliseconds, 0 or more',
    )
    expect(bad({ maxWait: -1 })).toThrow('got -1')
    expect(bad({ maxWait: 1.5 })).toThrow('Invalid `acquire.maxWait`')
    expect(bad({ maxWait: 'soon' })).toThrow(TypeError)
    expect(bad({ maxwait: '1s' })).toThrow('Invalid `acquire.maxwait`: is not an option')
    expect(bad({ maxwait: '1s' })).toThrow('did you mean `maxWait`?')
    expect(bad(5)).toThrow(TypeError)
    expect(bad(5)).toThrow('Invalid `acquire`: expected an object { maxWait? }, got 5')
    for (const ok of [0, '0s', 1, '30s', {}]) {
      const acquire = typeof ok === 'object' ? ok : { maxWait: ok }
      expect(() => createLimiter({ ...base, acquire } as LimiterOptions)).not.toThrow()
    }
  })

  it("a call's maxWait: -1 says 0 is accepted, and 0 is", async () => {
    const limiter = createLimiter(base)
    const error = await limiter.acquire('k', { maxWait: -1 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RangeError)
    expect((error as Error).message).toBe(
      'Invalid `maxWait`: must be a whole number of milliseconds, 0 or more (0: take a free slot or be refused at once), got -1.',
    )
    expect((await limiter.acquire('k', { maxWait: 0 })).allowed).toBe(true)
    expect((await limiter.acquire('j', { maxWait: '0ms' })).allowed).toBe(true)
  })
})
