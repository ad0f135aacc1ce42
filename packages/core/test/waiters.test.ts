// acquire/run's waiters for a concurrency slot: one store decision per freed slot, first in first
// out (a woken waiter that loses the slot goes back to the head), one abort listener per signal.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { afterEach, describe, expect, it } from 'vitest'
import {
  createLimiter,
  type Decision,
  type DecisionEvent,
  type Limiter,
  type LimiterOptions,
} from '../src/index.js'
import { useRedis } from './setup/redis.js'
import { sleep, storeCases } from './setup/stores.js'

const redis = useRedis()
let unique = 0

// Counts the store decisions (cost > 0) `limiter` makes, on `limiter:decision`.
const counters: Array<() => void> = []
function countDecisions(limiter: Limiter, each?: (event: DecisionEvent) => void) {
  const seen = { decisions: 0, refused: 0 }
  const on = (message: unknown) => {
    const event = message as DecisionEvent
    if (event.limiter !== limiter || event.cost === 0) return
    seen.decisions++
    if (!event.decision.allowed) seen.refused++
    each?.(event)
  }
  subscribe('limiter:decision', on)
  counters.push(() => unsubscribe('limiter:decision', on))
  return seen
}
afterEach(() => {
  for (const stop of counters.splice(0)) stop()
})

const STORES = storeCases(redis)

describe.each(STORES)('%s', (_name, makeStore) => {
  const make = (options: Partial<LimiterOptions> = {}, store = makeStore()): Limiter =>
    createLimiter({
      algorithm: 'concurrency',
      limit: 2,
      window: '1m',
      prefix: `wt${unique++}:`,
      store,
      // a thousand asks at once on a busy machine: a slow answer must not fail open
      timeout: '10s',
      ...options,
    } as LimiterOptions)

  it('1,000 run() at limit 2: about 1 store decision per waiter, admitted in arrival order', async () => {
    const limiter = make()
    const seen = countDecisions(limiter)
    const order: number[] = []
    let inFlight = 0
    let most = 0
    const calls = Array.from({ length: 1000 }, (_, i) =>
      limiter.run(
        'k',
        async () => {
          order.push(i)
          most = Math.max(most, ++inFlight)
          await sleep(1)
          inFlight--
        },
        { maxWait: '2m' },
      ),
    )
    await Promise.all(calls)
    // the first 2 ask, the rest queue without asking, and each asks once when woken; the
    // line's poll adds a few (4 a second at most once it has backed off). The target is 2n;
    // the old wake-everyone made about n^2 / 2 (500,499 in memory)
    expect(seen.decisions).toBeLessThanOrEqual(1000 + 200)
    expect(order).toEqual(Array.from({ length: 1000 }, (_, i) => i))
    expect(most).toBe(2)
  }, 60_000)

  it('a woken waiter that loses the slot to another process goes back to the head', async () => {
    const store = makeStore()
    const here = make({ limit: 1 }, store)
    // another process: another limiter on the same store and prefix, with its own waiters
    const there = createLimiter({
      algorithm: 'concurrency',
      limit: 1,
      window: '1m',
      prefix: here.prefix,
      store,
      timeout: '10s',
    })
    const held = await there.acquire('k')
    const order: number[] = []
    let asks = 0
    let freed: Promise<void> | undefined
    countDecisions(here, (event) => {
      // the 4th refusal is the line's first poll (3 waiters asked on arrival), refused while
      // the other process holds the slot: it frees it now, and the polled head must get it
      if (!event.decision.allowed && ++asks === 4) freed = there.release('k', held)
    })
    const waiters = [0, 1, 2].map((i) =>
      here.run('k', () => void order.push(i), { maxWait: '30s' }),
    )
    while (freed === undefined) await sleep(5)
    await Promise.all(waiters)
    expect(order).toEqual([0, 1, 2])
  }, 30_000)

  it('100 acquirers on one signal: no MaxListenersExceededWarning; the abort rejects them all', async () => {
    const warnings: Error[] = []
    const onWarning = (warning: Error) => warnings.push(warning)
    process.on('warning', onWarning)
    try {
      const limiter = make()
      const seen = countDecisions(limiter)
      const controller = new AbortController()
      const { signal } = controller
      let settledCount = 0
      const all = Array.from({ length: 100 }, () =>
        limiter
          .acquire('k', { maxWait: '1m', signal })
          .then(
            (decision) => ({ decision }),
            (error: unknown) => ({ error }),
          )
          .finally(() => settledCount++),
      )
      // every one has asked: 2 admitted, 98 waiting in line
      while (seen.decisions < 100 || settledCount < 2) await sleep(5)
      controller.abort(new Error('shutting down'))
      const settled = await Promise.all(all)
      const admitted = settled.flatMap((s) => ('decision' in s ? [s.decision as Decision] : []))
      const rejected = settled.filter((s) => 'error' in s)
      expect(admitted).toHaveLength(2)
      expect(rejected).toHaveLength(98)
      for (const r of rejected) expect(r).toMatchObject({ error: { message: 'shutting down' } })
      for (const d of admitted) await limiter.release('k', d)
      // the waiters left the line: a new caller gets a slot at once, and both are free
      expect((await limiter.acquire('k')).remaining).toBe(1)
      await new Promise((resolve) => setImmediate(resolve))
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([])
    } finally {
      process.off('warning', onWarning)
    }
  })

  it('100 reservations on one signal: the abort gives every one back, with no warning', async () => {
    const warnings: Error[] = []
    const onWarning = (warning: Error) => warnings.push(warning)
    process.on('warning', onWarning)
    try {
      const limiter = createLimiter({
        algorithm: 'gcra',
        limit: 10,
        window: '1s',
        burst: 1,
        maxDelay: '1m',
        prefix: `wt${unique++}:`,
        store: makeStore(),
        timeout: '10s',
      })
      const seen = countDecisions(limiter)
      const controller = new AbortController()
      const all = Array.from({ length: 100 }, () =>
        limiter.acquire('k', { signal: controller.signal }).catch((error: unknown) => error),
      )
      // every one has its reservation: the first goes at once, 99 wait theirs out
      while (seen.decisions < 100) await sleep(5)
      await sleep(5)
      controller.abort(new Error('shutting down'))
      const settled = await Promise.all(all)
      expect(settled.filter((s) => s instanceof Error)).toHaveLength(99) // the first went at once
      // 99 reservations given back: the next slot is the first one's, within 100 ms, not 9.9 s
      expect((await limiter.peek('k')).retryAfterMs).toBeLessThanOrEqual(100)
      await new Promise((resolve) => setImmediate(resolve))
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([])
    } finally {
      process.off('warning', onWarning)
    }
  })
})
