// createLimiter: option validation, and the failure policy against a Redis that stops answering.
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RedisProcess, startRedis } from '../../../test-support/redis.js'
import {
  createLimiter,
  type Decision,
  failureOf,
  type LimiterError,
  MemoryStore,
  RedisStore,
  type Store,
} from '../src/index.js'

describe('createLimiter options', () => {
  it.each([
    [{ limit: 1, window: 1, store: {} }, /`store`/, TypeError],
    [{ limit: 1, window: 1, name: 'a{b}' }, /`name`/, RangeError],
    [{ limit: 1, window: 1, name: '' }, /`name`/, TypeError],
    [{ limit: 1, window: 1, prefix: 'x}' }, /`prefix`/, RangeError],
    [{ limit: 1, window: 1, failureMode: 'maybe' }, /`failureMode`.*"maybe"/, RangeError],
    [{ limit: 1, window: 1, timeout: 'never' }, /`timeout`/, TypeError],
    [{ limit: 1, window: 1, onError: 'log' }, /`onError`/, TypeError],
    [{ limit: 1, window: '1 fortnight' }, /`window`/, TypeError],
    [{ limit: 1, window: 1, timeout: 0 }, /`timeout`.*at least 1/, RangeError],
    [{ limit: 1, window: 1, name: 'a\nb' }, /`name`/, RangeError],
    [{ limit: 1, window: 1, circuitBreaker: true }, /`circuitBreaker`/, TypeError],
    [
      { limit: 1, window: 1, circuitBreaker: { failureThreshold: 0 } },
      /`circuitBreaker.failureThreshold`/,
      RangeError,
    ],
    [
      { limit: 1, window: 1, circuitBreaker: { coolDown: 'later' } },
      /`circuitBreaker.coolDown`/,
      TypeError,
    ],
    [undefined, /`options`/, TypeError],
  ])('rejects %j at construction', (options, message, type) => {
    const attempt = () => createLimiter(options as never)
    expect(attempt).toThrow(type)
    expect(attempt).toThrow(message)
  })

  it('derives a deterministic default name from the policy', () => {
    const a = createLimiter({ algorithm: 'gcra', limit: 10, window: '1s', burst: 20 })
    const b = createLimiter({ algorithm: 'gcra', limit: 10, window: 1000, burst: 20 })
    expect(a.name).toBe('gc10/1sb20')
    expect(b.name).toBe(a.name)
    expect(createLimiter({ limit: 100, window: '1m' }).name).toBe('gc100/1m')
    expect(createLimiter({ algorithm: 'sliding-window', limit: 100, window: '1m' }).name).toBe(
      'sw100/1m',
    )
  })

  it('defaults to a MemoryStore', async () => {
    const limiter = createLimiter({ limit: 1, window: '1m' })
    expect((await limiter.consume('a')).allowed).toBe(true)
    expect((await limiter.consume('a')).allowed).toBe(false)
  })
})

describe('store options', () => {
  it.each([
    [() => new MemoryStore({ maxKeys: 0 }), /`maxKeys`/],
    [() => new MemoryStore({ maxKeys: 1.5 }), /`maxKeys`/],
    [() => new MemoryStore({ sweepIntervalMs: 0 }), /`sweepIntervalMs`/],
    [
      () => new RedisStore({ client: new Redis({ lazyConnect: true }), batch: { maxSize: 0 } }),
      /`batch.maxSize`/,
    ],
    [
      () => new RedisStore({ client: new Redis({ lazyConnect: true }), batch: { maxSize: 1001 } }),
      /`batch.maxSize`/,
    ],
  ])('%s throws a RangeError naming the option', (make, message) => {
    expect(make).toThrow(RangeError)
    expect(make).toThrow(message)
  })
})

describe('MemoryStore lifecycle', () => {
  it('a limiter keeps deciding after its store is closed, from empty state', async () => {
    const store = new MemoryStore()
    const limiter = createLimiter({ limit: 3, window: '1m', store })
    await limiter.consume('a')
    expect((await limiter.consume('a')).remaining).toBe(1)
    await store.close()
    expect(store.size).toBe(0)
    expect((await limiter.consume('a')).remaining).toBe(2)
    expect(store.size).toBe(1)
  })
})

describe('failure policy', () => {
  let server: RedisProcess
  let client: Redis
  beforeAll(async () => {
    server = await startRedis()
    client = new Redis(server.port, '127.0.0.1')
    await client.ping()
  })
  afterAll(async () => {
    client.disconnect()
    await server.stop()
  })

  async function whileFrozen<T>(work: () => Promise<T>): Promise<T> {
    server.process.kill('SIGSTOP')
    try {
      return await work()
    } finally {
      server.process.kill('SIGCONT')
    }
  }

  it.each([
    ['open', true],
    ['closed', false],
  ] as const)(
    "'%s': a frozen Redis gets an answer by the deadline, reported once per failure",
    async (failureMode, allowed) => {
      const errors: LimiterError[] = []
      const limiter = createLimiter({
        limit: 5,
        window: '1m',
        name: `frozen-${failureMode}`,
        store: new RedisStore({ client }),
        timeout: 100,
        failureMode,
        circuitBreaker: { coolDown: 200 },
        onError: (error) => errors.push(error),
      })
      const started = performance.now()
      const decisions = await whileFrozen(() =>
        Promise.all([limiter.consume('a'), limiter.consume('b'), limiter.consume('c')]),
      )
      const elapsed = performance.now() - started
      expect(elapsed).toBeLessThan(100 + 150)
      expect(decisions.map((d) => d.allowed)).toEqual([allowed, allowed, allowed])
      if (!allowed) expect(decisions[0]?.retryAfterMs).toBeGreaterThan(0)
      // The decisions say they come from a failure, not from the quota.
      expect(failureOf(decisions[0] as Decision)?.code).toBe('ERR_LIMITER_TIMEOUT')
      expect(errors).toHaveLength(3)
      expect(errors[0]?.code).toBe('ERR_LIMITER_TIMEOUT')
      // Redis answers again: after the circuit's cool-down, decisions come from Redis.
      await client.ping()
      await new Promise((r) => setTimeout(r, 250))
      const again = await limiter.consume('fresh')
      expect(failureOf(again)).toBeUndefined()
      expect(again).toMatchObject({ allowed: true, remaining: 4 })
    },
  )

  it("'local': decides with a process-local MemoryStore of the same policy while Redis is frozen", async () => {
    const limiter = createLimiter({
      limit: 2,
      window: '1m',
      store: new RedisStore({ client }),
      timeout: 100,
      failureMode: 'local',
      onError: () => {},
    })
    const decisions = await whileFrozen(async () => [
      await limiter.consume('l'),
      await limiter.consume('l'),
      await limiter.consume('l'),
    ])
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, false])
  })

  it('a throwing onError hook does not break the decision', async () => {
    const limiter = createLimiter({
      limit: 1,
      window: '1m',
      store: new RedisStore({ client }),
      timeout: 50,
      onError: () => {
        throw new Error('hook bug')
      },
    })
    const decision = await whileFrozen(() => limiter.consume('h'))
    expect(decision.allowed).toBe(true)
  })

  it('an event-loop stall longer than the deadline does not time out replies that arrived during it', async () => {
    // Regression: timers run before socket reads in each loop turn, so after a GC pause or a busy
    // CPU the deadline fired first and a healthy Redis's answers became failures.
    const errors: LimiterError[] = []
    const limiter = createLimiter({
      limit: 100,
      window: '1m',
      name: 'stall',
      store: new RedisStore({ client }),
      timeout: 50,
      failureMode: 'closed',
      onError: (error) => errors.push(error),
    })
    await limiter.consume('warm')
    for (let round = 0; round < 3; round++) {
      const pending = Promise.all([limiter.consume('s1'), limiter.consume('s2')])
      // Runs right after the batch is written to the socket: Redis answers during the stall.
      setImmediate(() => {
        const until = performance.now() + 300
        while (performance.now() < until) {
          // a synchronous stall, six times the deadline
        }
      })
      const decisions = await pending
      expect(decisions.map((d) => failureOf(d))).toEqual([undefined, undefined])
    }
    expect(errors).toEqual([])
  })

  it('MemoryStore never gets a deadline timer', async () => {
    const limiter = createLimiter({ limit: 1, window: '1m', store: new MemoryStore(), timeout: 1 })
    expect((await limiter.consume('m')).allowed).toBe(true)
  })
})

describe('circuit breaker per failure domain', () => {
  it("a failing domain opens its own circuit only: other domains' keys keep their real decisions", async () => {
    const memory = new MemoryStore()
    let down = true
    const calls = { down: 0, up: 0 }
    // A remote-looking store with two domains (`down:*` and `up:*` keys), one of them failing.
    const store: Store = {
      failureDomain: (call) => call.key.split(':')[0] as string,
      consume: async (call) => {
        const domain = call.key.startsWith('down:') ? 'down' : 'up'
        calls[domain]++
        if (domain === 'down' && down) throw new Error('node is down')
        return memory.consume(call)
      },
      refund: (call) => memory.refund(call),
      reset: (call) => memory.reset(call),
    }
    const limiter = createLimiter({
      limit: 100,
      window: '1m',
      store,
      failureMode: 'closed',
      circuitBreaker: { failureThreshold: 3, coolDown: 100 },
      onError: () => {},
    })
    for (let i = 0; i < 10; i++) {
      const [onDown, onUp] = await Promise.all([
        limiter.consume(`down:${i}`),
        limiter.consume(`up:${i}`),
      ])
      expect(failureOf(onDown as Decision)).toBeDefined()
      expect(onDown?.allowed).toBe(false)
      expect(failureOf(onUp as Decision)).toBeUndefined()
      expect(onUp?.allowed).toBe(true)
    }
    // The failing domain's circuit opened after 3 failures; the other domain's never did.
    expect(calls).toEqual({ down: 3, up: 10 })
    down = false
    await new Promise((r) => setTimeout(r, 150))
    expect(failureOf(await limiter.consume('down:again'))).toBeUndefined()
  })
})
