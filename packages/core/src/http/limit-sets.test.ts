import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { LimiterError } from '../common/errors.js'
import { MemoryStore } from '../stores/memory-store.js'
import { type LimitSet, limitsPerRequest, MAX_LIMIT_SETS } from './limit-sets.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

type Req = { plan: number }

describe('limits chosen per request', () => {
  it('builds each distinct set of policies once, and keeps the most recently used', async () => {
    const setFor = limitsPerRequest((req: Req) => ({ limit: req.plan, window: '1m' }), {})
    const first = setFor({ plan: 1 }) as LimitSet
    expect(setFor({ plan: 1 })).toBe(first)
    expect(setFor({ plan: 2 })).not.toBe(first)
    // past MAX_LIMIT_SETS others, plan 1 is built anew (its old limiter was let go)
    for (let plan = 3; plan < MAX_LIMIT_SETS + 3; plan++) setFor({ plan })
    expect(setFor({ plan: 1 })).not.toBe(first)
  })

  it('100,000 distinct policies from an attacker keep memory bounded', async () => {
    // The store's own bound (maxKeys) caps the counters; what is checked here is everything else
    // a plan leaves behind: its limiter and its namespace.
    const store = new MemoryStore({ maxKeys: 1000 })
    const setFor = limitsPerRequest((req: Req) => [{ limit: req.plan, window: '1m' }], { store })
    const heapAfter = async (from: number, to: number): Promise<number> => {
      for (let plan = from; plan < to; plan++) {
        ;(setFor({ plan }) as LimitSet).limiter.consume('attacker').catch(() => {})
        // each request is its own turn of the event loop, as on a server
        if (plan % 500 === 0) await new Promise((resolve) => setImmediate(resolve))
      }
      for (let i = 0; i < 3; i++) {
        gc()
        await new Promise((resolve) => setImmediate(resolve))
      }
      return process.memoryUsage().heapUsed
    }
    const warm = await heapAfter(1, 5_000)
    const after = await heapAfter(5_000, 100_000)
    // unbounded, each of the 95,000 more would keep a limiter and a namespace (KBs each)
    expect(after - warm).toBeLessThan(16 * 1024 * 1024)
  }, 60_000)

  it('a tier that gives a shared policy name another algorithm fails with both tiers named', () => {
    type Plan = { plan: 'free' | 'pro' }
    const setFor = limitsPerRequest(
      (req: Plan) =>
        req.plan === 'pro'
          ? { name: 'minute', limit: 1000, window: '1m', algorithm: 'sliding-window' as const }
          : { name: 'minute', limit: 100, window: '1m' },
      {},
    )
    expect((setFor({ plan: 'free' }) as LimitSet).limiter.policy.limit).toBe(100)
    let error: unknown
    try {
      setFor({ plan: 'pro' })
    } catch (thrown) {
      error = thrown
    }
    expect(error).toBeInstanceOf(LimiterError)
    expect((error as LimiterError).code).toBe('ERR_LIMITER_CONFLICT')
    const message = (error as LimiterError).message
    expect(message).toContain('rateLimit option `limits` returned')
    // both tiers' specs, and both algorithms
    expect(message).toContain(
      '[{"name":"minute","limit":1000,"window":"1m","algorithm":"sliding-window"}]',
    )
    expect(message).toContain('[{"name":"minute","limit":100,"window":"1m"}]')
    expect(message).toMatch(/"minute" is 'sliding-window'.*"minute" is 'gcra'/)
    // the first tier is unaffected
    expect((setFor({ plan: 'free' }) as LimitSet).limiter.policy.limit).toBe(100)
  })

  // Regression (found from outside): tiers sharing a sliding-log or sliding-window name with
  // different windows let one request under the short window erase the long one's count (199
  // admitted in about a minute against 100 an hour, on both stores)
  it.each(['sliding-log', 'sliding-window', 'fixed-window'] as const)(
    "a tier that gives a shared %s policy another window fails; gcra's may differ",
    (algorithm) => {
      type Plan = { plan: 'anonymous' | 'signed-in' }
      const tiers = (counting: boolean) =>
        limitsPerRequest(
          (req: Plan) => ({
            name: 'api',
            algorithm: counting ? algorithm : ('gcra' as const),
            ...(req.plan === 'signed-in'
              ? { limit: 100, window: '1h' }
              : { limit: 10, window: '1m' }),
          }),
          { store: new MemoryStore() },
        )
      const setFor = tiers(true)
      expect((setFor({ plan: 'signed-in' }) as LimitSet).limiter.policy.limit).toBe(100)
      let error: unknown
      try {
        setFor({ plan: 'anonymous' })
      } catch (thrown) {
        error = thrown
      }
      expect((error as LimiterError).code).toBe('ERR_LIMITER_CONFLICT')
      expect((error as LimiterError).message).toMatch(
        new RegExp(
          `'${algorithm}' policy "api" has a window of 60000 ms, .* where its window is 3600000 ms`,
        ),
      )
      // the first tier is unaffected
      expect((setFor({ plan: 'signed-in' }) as LimitSet).limiter.policy.limit).toBe(100)
      const gcra = tiers(false)
      gcra({ plan: 'signed-in' })
      expect((gcra({ plan: 'anonymous' }) as LimitSet).limiter.policy.limit).toBe(10)
    },
  )

  it('refuses more than 8 policies before reading them', () => {
    let reads = 0
    const spec = { limit: 1, window: '1m' }
    const many = new Array(200_000).fill(spec)
    // a getter counts how often a policy is read (JSON text, validation)
    const watched = Object.defineProperty(many, 0, {
      get: () => {
        reads++
        return spec
      },
    })
    const setFor = limitsPerRequest(() => watched, {})
    expect(() => setFor({ plan: 1 })).toThrow(
      /`limits` returned 200000 policies \(expected 1 to 8\)/,
    )
    expect(reads).toBe(0)
    expect(() => limitsPerRequest(() => [], {})({ plan: 1 })).toThrow(/returned 0 policies/)
  })
})
