// The store contract: one suite every store passes (MemoryStore, RedisStore on standalone Redis,
// RedisStore on a Redis Cluster). Time comes from an injected clock.
import { describe, expect, it } from 'vitest'
import {
  ALGORITHMS,
  type Algorithm,
  createLimiter,
  type LimiterOptions,
  type Store,
} from '../src/index.js'
import { withClock } from '../src/testing/index.js'

let unique = 0

/** Runs the contract against the store `makeStore()` returns (called lazily, inside tests). */
export function describeStoreContract(name: string, makeStore: () => Store): void {
  describe.each(ALGORITHMS)(`${name} contract: %s`, (algorithm: Algorithm) => {
    let now = 1_750_000_000_000
    const clock = () => now
    // A concurrency policy's Retry-After is an estimate unless it is its window: then a refusal
    // waits exactly until the oldest lease expires, and the contract holds as it stands.
    const limiter = (options: Omit<Extract<LimiterOptions, { limit: number }>, 'store'>) =>
      createLimiter(
        withClock(
          {
            algorithm,
            name: `c${unique++}`,
            ...options,
            ...(algorithm === 'concurrency' ? { retryAfter: options.window } : {}),
            store: makeStore(),
          } as LimiterOptions,
          clock,
        ),
      )

    it('admits up to the limit in one millisecond, then rejects with an honest retryAfterMs', async () => {
      const l = limiter({ limit: 5, window: '10s' })
      const decisions = await Promise.all(Array.from({ length: 8 }, () => l.consume('burst')))
      expect(decisions.filter((d) => d.allowed)).toHaveLength(5)
      const denied = decisions.find((d) => !d.allowed)
      expect(denied).toMatchObject({ allowed: false, limit: 5, remaining: 0 })
      const wait = denied?.retryAfterMs ?? 0
      expect(wait).toBeGreaterThan(0)
      now += wait
      expect((await l.consume('burst')).allowed).toBe(true)
    })

    it('keeps keys distinct, whatever characters they contain', async () => {
      const l = limiter({ limit: 1, window: '1h' })
      const keys = [
        'a',
        'a}',
        '{a}',
        'a{b}c',
        'a:b',
        'a\nb',
        'ключ',
        '🚦',
        '%7B',
        '%H',
        'x'.repeat(5000),
        `${'x'.repeat(4999)}y`,
        '*',
        ' ',
      ]
      for (const key of keys) expect((await l.consume(key)).allowed, key.slice(0, 20)).toBe(true)
      for (const key of keys) expect((await l.consume(key)).allowed, key.slice(0, 20)).toBe(false)
    })

    it('block refuses the key, whatever its spelling, until it ends or reset lifts it', async () => {
      const l = limiter({ limit: 3, window: '10s' })
      for (const key of ['a}', '{a}', 'x'.repeat(5000)]) {
        await l.block(key, 2000)
        expect(await l.consume(key), key.slice(0, 20)).toMatchObject({
          allowed: false,
          remaining: 0,
          retryAfterMs: 2000,
        })
      }
      expect((await l.consume('a')).allowed).toBe(true)
      expect((await l.consume(`${'x'.repeat(4999)}y`)).allowed).toBe(true)
      now += 2000
      expect((await l.consume('a}')).allowed).toBe(true)
      await l.block('b', 5000)
      await l.reset('b')
      expect((await l.consume('b')).allowed).toBe(true)
    })

    it('penalize counts past the limit (not for concurrency: a penalty is not a lease)', async () => {
      const l = limiter({ limit: 3, window: '10s' })
      if (algorithm === 'concurrency') {
        await expect(l.penalize('pen', 4)).rejects.toMatchObject({
          code: 'ERR_LIMITER_UNSUPPORTED',
        })
        return
      }
      const d = await l.penalize('pen', 4)
      expect(d).toMatchObject({ allowed: false, remaining: 0 })
      expect(d.retryAfterMs).toBeGreaterThan(0)
      expect((await l.consume('pen')).allowed).toBe(false)
      now += d.retryAfterMs
      expect((await l.consume('pen')).allowed).toBe(true)
    })

    it('peek changes nothing and reset forgets', async () => {
      const l = limiter({ limit: 2, window: '1m' })
      await l.consume('p')
      const before = await l.peek('p')
      expect(before).toMatchObject({ allowed: true, remaining: 1 })
      expect(await l.peek('p')).toEqual(before)
      expect(await l.consume('p', 0)).toEqual(before)
      await l.reset('p')
      expect(await l.peek('p')).toMatchObject({ remaining: 2, resetMs: 0 })
    })

    it('a rejected request changes nothing', async () => {
      const l = limiter({ limit: 3, window: '1m' })
      await l.consume('r', 2)
      const before = await l.peek('r')
      expect((await l.consume('r', 2)).allowed).toBe(false)
      expect(await l.peek('r')).toEqual(before)
    })

    it('refund gives quota back, never above full', async () => {
      const l = limiter({ limit: 3, window: '1m' })
      const d = await l.consume('f', 2)
      await l.refund('f', 2, d)
      expect(await l.peek('f')).toMatchObject({ remaining: 3 })
      await l.refund('f', 3)
      expect(await l.peek('f')).toMatchObject({ remaining: 3 })
    })

    it('a raised limit applies to the next decision', async () => {
      const named = `raise${unique++}`
      const store = makeStore()
      const small = createLimiter(
        withClock({ algorithm, limit: 2, window: '1h', name: named, store }, clock),
      )
      const large = createLimiter(
        withClock({ algorithm, limit: 4, window: '1h', name: named, store }, clock),
      )
      await small.consume('u')
      await small.consume('u')
      expect((await small.consume('u')).allowed).toBe(false)
      // Counting algorithms admit at once; buckets have the new capacity and refill rate from now.
      const next = await large.consume('u')
      if (['fixed-window', 'sliding-window', 'sliding-log'].includes(algorithm))
        expect(next.allowed).toBe(true)
      now += 900_000 // a quarter of the window: the new rate refills one request
      expect((await large.consume('u')).allowed).toBe(true)
    })

    // (a concurrency lease keeps the expiry it was taken with: a shorter window applies to the
    // leases taken after the change; its Retry-After is an estimate in any case)
    it.skipIf(algorithm === 'concurrency')(
      'after a change to a shorter window, a refused key is admitted once its retryAfterMs has passed',
      async () => {
        const named = `shrink${unique++}`
        const store = makeStore()
        const make = (window: string) =>
          createLimiter(withClock({ algorithm, limit: 2, window, name: named, store }, clock))
        const long = make('1h')
        const short = make('1s')
        // The first request after the change is a consume for one key and a peek for the other.
        for (const first of ['consume', 'peek'] as const) {
          const key = `s-${first}`
          await long.consume(key, 2)
          now += 10
          const refused = first === 'consume' ? await short.consume(key) : await short.peek(key)
          // A fixed window ends no later than the new length from the first request that saw it.
          if (algorithm === 'fixed-window') expect(refused).toMatchObject({ retryAfterMs: 1000 })
          // sliding-window aligns windows to the new length: the old hour has left its estimate.
          if (algorithm === 'sliding-window') expect(refused.allowed).toBe(true)
          if (refused.allowed) continue
          now += 400
          const later = await short.consume(key)
          expect(later.allowed).toBe(false)
          expect(later.retryAfterMs).toBe(refused.retryAfterMs - 400)
          now += later.retryAfterMs
          expect((await short.consume(key)).allowed).toBe(true)
        }
      },
    )

    it('rejects bad input with clear errors', async () => {
      const l = limiter({ limit: 3, window: '1m' })
      await expect(l.consume('')).rejects.toThrow(/`key`/)
      await expect(l.consume(undefined as never)).rejects.toThrow(TypeError)
      await expect(l.consume('k', 4)).rejects.toThrow(/`cost`.*burst/)
      await expect(l.consume('k', 1.5)).rejects.toThrow(RangeError)
      await expect(l.consume('k', -1)).rejects.toThrow(/`cost`/)
    })
  })
}
