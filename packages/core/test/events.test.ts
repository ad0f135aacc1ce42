// The events a limiter publishes on node:diagnostics_channel, and shadow mode, through the public
// API: on MemoryStore, on a real Redis, and with a store that fails and recovers.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  BLOCK_CHANNEL,
  type BlockEvent,
  CIRCUIT_CHANNEL,
  type CircuitEvent,
  createLimiter,
  DECISION_CHANNEL,
  type DecisionEvent,
  FAILURE_CHANNEL,
  type FailureEvent,
  MemoryStore,
  RedisStore,
  type Store,
  type StoreCall,
  type StoreDecision,
} from '../src/index.js'
import { useRedis } from './setup/redis.js'

const redis = useRedis()

// Collects the messages of `name` until the test ends.
const listening: Array<[string, (message: unknown) => void]> = []
function collect<T>(name: string): T[] {
  const seen: T[] = []
  const listener = (message: unknown) => seen.push(message as T)
  subscribe(name, listener)
  listening.push([name, listener])
  return seen
}
afterEach(() => {
  for (const [name, listener] of listening.splice(0)) unsubscribe(name, listener)
})

describe('limiter:decision', () => {
  it('publishes every decision of a MemoryStore limiter, with its key, cost and source', async () => {
    const events = collect<DecisionEvent>(DECISION_CHANNEL)
    const limiter = createLimiter({ limit: 2, window: '1m', name: 'mem-events' })
    const decisions = [
      await limiter.consume('a'),
      await limiter.consume('a', 1),
      await limiter.consume('a'),
      await limiter.peek('b'),
    ]
    const mine = events.filter((e) => e.limiter === limiter)
    expect(mine.map((e) => [e.key, e.cost, e.decision.allowed])).toEqual([
      ['a', 1, true],
      ['a', 1, true],
      ['a', 1, false],
      ['b', 0, true],
    ])
    mine.forEach((e, i) => {
      expect(e.decision).toBe(decisions[i])
      expect(e).toMatchObject({ source: 'store', store: 'memory', shadow: false })
      expect(e.durationMs).toBeGreaterThanOrEqual(0)
      expect(e.durationMs).toBeLessThan(1000)
    })
  })

  it('publishes nothing for a call with bad input (it throws before deciding)', async () => {
    const events = collect<DecisionEvent>(DECISION_CHANNEL)
    const limiter = createLimiter({ limit: 2, window: '1m' })
    await expect(limiter.consume('')).rejects.toThrow()
    expect(events.filter((e) => e.limiter === limiter)).toEqual([])
  })

  it('names Redis and the round trip; the blocked-key cache answers as itself', async () => {
    const events = collect<DecisionEvent>(DECISION_CHANNEL)
    const limiter = createLimiter({
      limit: 1,
      window: '1m',
      name: `redis-events-${process.pid}`,
      store: new RedisStore({ client: redis.client }),
    })
    await limiter.consume('k')
    await limiter.consume('k') // refused by Redis: cached
    await limiter.consume('k') // refused by the cache
    const mine = events.filter((e) => e.limiter === limiter)
    expect(mine.map((e) => [e.source, e.store, e.decision.allowed])).toEqual([
      ['store', 'redis', true],
      ['store', 'redis', false],
      ['blocked-cache', 'redis', false],
    ])
    expect(mine[0]?.durationMs).toBeGreaterThan(0)
    await limiter.reset('k')
  })

  it('costs nothing when nobody listens: no event object is built', async () => {
    // a listener that subscribes after the decision was asked sees nothing of it
    const limiter = createLimiter({ limit: 2, window: '1m' })
    const pending = limiter.consume('late')
    const events = collect<DecisionEvent>(DECISION_CHANNEL)
    await pending
    expect(events.filter((e) => e.limiter === limiter)).toEqual([])
  })
})

describe('shadow mode', () => {
  it('decides and counts exactly as enforce mode; events say shadow', async () => {
    const events = collect<DecisionEvent>(DECISION_CHANNEL)
    const store = new MemoryStore()
    const shadow = createLimiter({ limit: 2, window: '1m', mode: 'shadow', store, name: 's' })
    const enforce = createLimiter({ limit: 2, window: '1m', store, name: 'e' })
    expect(shadow.mode).toBe('shadow')
    expect(enforce.mode).toBe('enforce')
    const a: boolean[] = []
    const b: boolean[] = []
    for (let i = 0; i < 3; i++) {
      a.push((await shadow.consume('k')).allowed)
      b.push((await enforce.consume('k')).allowed)
    }
    expect(a).toEqual(b)
    expect(a).toEqual([true, true, false])
    expect(events.filter((e) => e.limiter === shadow).map((e) => e.shadow)).toEqual([
      true,
      true,
      true,
    ])
  })

  it('acquire never waits and never refuses in shadow mode', async () => {
    const limiter = createLimiter({ limit: 1, window: '1m', mode: 'shadow' })
    await limiter.acquire('k')
    const started = performance.now()
    const refused = await limiter.acquire('k', { maxWait: '10s' })
    expect(refused.allowed).toBe(false)
    expect(performance.now() - started).toBeLessThan(1000)
  })

  it('rejects an unknown mode at construction, naming the option and the value', () => {
    expect(() => createLimiter({ limit: 1, window: '1m', mode: 'dry' as never })).toThrow(
      /`mode`: must be 'enforce' or 'shadow', got "dry"/,
    )
    expect(() => createLimiter({ limit: 1, window: '1m', shadow: true } as never)).toThrow(
      /did you mean `mode`/,
    )
  })
})

// A remote store that fails while `down` is true.
function flakyStore(): Store & { down: boolean } {
  const memory = new MemoryStore()
  const store = {
    down: true,
    consume(call: StoreCall): Promise<StoreDecision> {
      if (store.down) return Promise.reject(new Error('connection refused'))
      return memory.consume(call)
    },
    refund: (call: StoreCall) => memory.refund(call),
    reset: (call: StoreCall) => memory.reset(call),
    release(call: StoreCall): Promise<void> {
      if (store.down) return Promise.reject(new Error('connection refused'))
      return memory.release(call)
    },
    penalize(call: StoreCall): Promise<StoreDecision | StoreDecision[]> {
      if (store.down) return Promise.reject(new Error('connection refused'))
      return memory.penalize(call)
    },
  }
  return store
}

// A limiter on `store` whose circuit opens after two failures and probes again after 50 ms.
const breakerOn = (store: Store) =>
  createLimiter({
    limit: 5,
    window: '1m',
    store,
    onError: () => {},
    circuitBreaker: { failureThreshold: 2, coolDown: 50 },
  })

describe('limiter:failure and limiter:circuit', () => {
  it('publishes each store failure, and the circuit opening and closing', async () => {
    const failures = collect<FailureEvent>(FAILURE_CHANNEL)
    const circuits = collect<CircuitEvent>(CIRCUIT_CHANNEL)
    const decisions = collect<DecisionEvent>(DECISION_CHANNEL)
    const store = flakyStore()
    const limiter = breakerOn(store)
    for (let i = 0; i < 4; i++) await limiter.consume('k')
    // two failures open the circuit; the next two calls skip the store (not failures)
    const mine = failures.filter((e) => e.limiter === limiter)
    expect(mine.map((e) => [e.key, e.error.code, e.circuitOpen])).toEqual([
      ['k', 'ERR_LIMITER_STORE', false],
      ['k', 'ERR_LIMITER_STORE', true],
    ])
    expect(mine[0]?.error.message).toMatch(/connection refused/)
    expect(decisions.filter((e) => e.limiter === limiter).map((e) => e.source)).toEqual([
      'fail-open',
      'fail-open',
      'fail-open',
      'fail-open',
    ])
    expect(circuits.filter((e) => e.limiter === limiter)).toEqual([
      { limiter, domain: '', state: 'open' },
    ])
    // after the cool-down a probe succeeds: the circuit closes
    store.down = false
    await new Promise((r) => setTimeout(r, 80))
    expect((await limiter.consume('k')).source).toBe('store')
    expect(circuits.filter((e) => e.limiter === limiter).map((e) => e.state)).toEqual([
      'open',
      'closed',
    ])
  })

  it('a failed probe keeps the circuit open without a second open event', async () => {
    const circuits = collect<CircuitEvent>(CIRCUIT_CHANNEL)
    const limiter = createLimiter({
      limit: 5,
      window: '1m',
      store: flakyStore(),
      onError: () => {},
      circuitBreaker: { failureThreshold: 1, coolDown: 20 },
    })
    await limiter.consume('k')
    await new Promise((r) => setTimeout(r, 40))
    await limiter.consume('k') // the probe fails
    expect(circuits.filter((e) => e.limiter === limiter).map((e) => e.state)).toEqual(['open'])
  })
})

describe('failures and the hooks around them', () => {
  // Regression: only a synchronous throw was caught; an async hook's rejection crashed the host
  it('an async onError that rejects is no unhandled rejection', async () => {
    const unhandled: unknown[] = []
    const note = (reason: unknown) => unhandled.push(reason)
    process.on('unhandledRejection', note)
    try {
      const limiter = createLimiter({
        limit: 5,
        window: '1m',
        store: flakyStore(),
        onError: async () => {
          throw new Error('log shipper down')
        },
      })
      expect((await limiter.consume('k')).source).toBe('fail-open')
      await new Promise((r) => setTimeout(r, 20))
      expect(unhandled).toEqual([])
    } finally {
      process.off('unhandledRejection', note)
    }
  })

  // Regression: give-backs skipped the store while the circuit was open, silently, so a blip
  // that opened it held every lease taken before it for the lease's window
  it('a release while the circuit is open still reaches the store', async () => {
    const store = flakyStore()
    store.down = false
    const errors: string[] = []
    const limiter = createLimiter({
      algorithm: 'concurrency',
      limit: 1,
      window: '1m',
      store,
      onError: (error, { operation }) => errors.push(`${operation} ${error.code}`),
      circuitBreaker: { failureThreshold: 2, coolDown: 50 },
    })
    const lease = await limiter.consume('job')
    expect(lease.source).toBe('store')
    store.down = true
    await limiter.consume('a')
    await limiter.consume('b') // the circuit opens
    store.down = false
    await limiter.release('job', lease)
    await new Promise((r) => setTimeout(r, 80))
    const again = await limiter.consume('job')
    expect([again.source, again.allowed]).toEqual(['store', true])
    expect(errors).toEqual(['decide ERR_LIMITER_STORE', 'decide ERR_LIMITER_STORE'])
  })

  // Regression: a penalty failureMode answered was published, and the inspector listed it
  it.each(['open', 'closed'] as const)(
    'a penalize the store never took publishes no block event (failureMode %s)',
    async (failureMode) => {
      const events = collect<BlockEvent>(BLOCK_CHANNEL)
      const store = flakyStore()
      const limiter = createLimiter({
        limit: 2,
        window: '1m',
        store,
        failureMode,
        onError: () => {},
      })
      const failed = await limiter.penalize('p', 3)
      expect(failed.source).toBe(`fail-${failureMode}`)
      store.down = false
      await limiter.penalize('q', 3)
      expect(events.filter((e) => e.limiter === limiter).map((e) => e.key)).toEqual(['q'])
    },
  )
})

describe('the circuit breaker and the wall clock', () => {
  // Regression: the cool-down was timed on Date.now, so a clock stepped back (NTP, a VM resumed)
  // kept the circuit open for the size of the step, every decision from the failure mode.
  it.each([-3_600_000, 3_600_000])(
    'a clock stepped %d ms waits the cool-down, no more',
    async (step) => {
      const store = flakyStore()
      const limiter = breakerOn(store)
      await limiter.consume('k')
      await limiter.consume('k')
      expect((await limiter.consume('k')).source).toBe('fail-open') // open: the store is skipped
      const wall = Date.now.bind(Date)
      const stepped = vi.spyOn(Date, 'now').mockImplementation(() => wall() + step)
      try {
        store.down = false
        // a clock stepped forward must not close it early either
        if (step > 0) expect((await limiter.consume('k')).source).toBe('fail-open')
        await new Promise((r) => setTimeout(r, 80))
        expect((await limiter.consume('k')).source).toBe('store')
      } finally {
        stepped.mockRestore()
      }
    },
  )
})

describe('limiter:block', () => {
  it('publishes each block and penalty once it resolves, with its end', async () => {
    const events = collect<BlockEvent>(BLOCK_CHANNEL)
    const limiter = createLimiter({ limit: 2, window: '1m', name: 'block-events' })
    const before = Date.now()
    await limiter.block('b', '10m')
    const kept = await limiter.penalize('p') // 1 of 2 counted: a request would still pass
    const refused = await limiter.penalize('p', 5)
    const mine = events.filter((e) => e.limiter === limiter)
    expect(mine.map((e) => [e.kind, e.key, e.durationMs, e.cost])).toEqual([
      ['block', 'b', 600_000, 0],
      ['penalty', 'p', 0, 1],
      ['penalty', 'p', refused.retryAfterMs, 5],
    ])
    expect(refused.retryAfterMs).toBeGreaterThan(0)
    expect(mine[0]?.decision).toBeUndefined()
    expect(mine[1]?.decision).toBe(kept)
    expect(mine[2]?.decision).toBe(refused)
    expect(mine[0]?.untilMs).toBeGreaterThanOrEqual(before + 600_000)
    expect(mine[0]?.untilMs).toBeLessThanOrEqual(Date.now() + 600_000)
  })

  it('costs nothing when nobody listens: a block asked before anyone listened is not published', async () => {
    const limiter = createLimiter({ limit: 2, window: '1m' })
    const pending = limiter.block('late', '1m')
    const events = collect<BlockEvent>(BLOCK_CHANNEL)
    await pending
    expect(events.filter((e) => e.limiter === limiter)).toEqual([])
  })

  it('publishes a block on Redis, and nothing for one that failed or had bad input', async () => {
    const events = collect<BlockEvent>(BLOCK_CHANNEL)
    const limiter = createLimiter({
      limit: 1,
      window: '1m',
      name: `redis-block-events-${process.pid}`,
      store: new RedisStore({ client: redis.client }),
    })
    await limiter.block('r', '1m')
    await expect(limiter.block('r', 0)).rejects.toThrow()
    const failing = createLimiter({
      limit: 5,
      window: '1m',
      store: flakyStore(),
      onError: () => {},
    })
    await expect(failing.block('f', '1m')).rejects.toThrow()
    expect(events.map((e) => [e.limiter === limiter, e.kind, e.key])).toEqual([
      [true, 'block', 'r'],
    ])
    await limiter.reset('r')
  })
})
