// The OpenTelemetry bridge end to end: real limiters (MemoryStore, a real Redis, a Redis that is
// down and comes back) publish, the bridge records, the real metrics SDK collects.
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { freePort, startRedis } from '../../../test-support/redis.js'
import { createLimiter, type FailureMode, RedisStore } from '../src/index.js'
import { instrumentLimiters, type LimiterInstrumentation } from '../src/observability/otel/index.js'
import { type MetricsSdk, metricsSdk, sumOf, table } from './setup/otel.js'
import { useRedis } from './setup/redis.js'

const redis = useRedis()

let sdk: MetricsSdk
let bridge: LimiterInstrumentation | undefined
function start(name: string | RegExp) {
  sdk = metricsSdk()
  // other test files' limiters run in other workers; this file's tests each watch their own
  bridge = instrumentLimiters({
    meterProvider: sdk.meterProvider,
    limiters: (l) => (typeof name === 'string' ? l.name === name : name.test(l.name)),
  })
}
afterEach(async () => {
  bridge?.stop()
  bridge = undefined
  await sdk?.shutdown()
})

const row = (name: string, policy: string, result: string, store: string, shadow = false) =>
  `limiter.name=${name},limiter.policy=${policy},limiter.result=${result},limiter.shadow=${shadow},limiter.store=${store}`

describe('on MemoryStore', () => {
  it('counts admissions and refusals, not peeks; a MemoryStore has no round trip to time', async () => {
    start('mem')
    const limiter = createLimiter({ limit: 3, window: '1m', name: 'mem' })
    for (let i = 0; i < 5; i++) await limiter.consume('a')
    await limiter.peek('a')
    expect(table(await sdk.points('limiter.decisions'))).toEqual({
      [row('mem', 'mem', 'allowed', 'memory')]: 3,
      [row('mem', 'mem', 'limited', 'memory')]: 2,
    })
    expect(await sdk.points('limiter.store.duration')).toEqual([])
  })

  it('adds up limiters of the same name (one per process, route or tier) in one series', async () => {
    start('twin')
    const one = createLimiter({ limit: 5, window: '1m', name: 'twin' })
    const two = createLimiter({ limit: 5, window: '1m', name: 'twin' })
    await one.consume('a')
    await two.consume('a')
    await two.consume('b')
    expect(table(await sdk.points('limiter.decisions'))).toEqual({
      [row('twin', 'twin', 'allowed', 'memory')]: 3,
    })
  })

  it('names the policy of a limiter with several: the closest to refusing', async () => {
    start('tiers')
    const limiter = createLimiter({
      name: 'tiers',
      limits: [
        { name: 'minute', limit: 5, window: '1m' },
        { name: 'hour', limit: 2, window: '1h' },
      ],
    })
    for (let i = 0; i < 3; i++) await limiter.consume('a')
    expect(table(await sdk.points('limiter.decisions'))).toEqual({
      [row('tiers', 'hour', 'allowed', 'memory')]: 2,
      [row('tiers', 'hour', 'limited', 'memory')]: 1,
    })
  })

  it('counts a shadow limiter refusals as would-be limits', async () => {
    start('watch')
    const limiter = createLimiter({ limit: 1, window: '1m', name: 'watch', mode: 'shadow' })
    for (let i = 0; i < 3; i++) await limiter.consume('a')
    expect(table(await sdk.points('limiter.decisions'))).toEqual({
      [row('watch', 'watch', 'allowed', 'memory', true)]: 1,
      [row('watch', 'watch', 'limited', 'memory', true)]: 2,
    })
  })

  it('stops counting after stop(), and a new bridge on the same meter continues the counts', async () => {
    start('stop')
    const limiter = createLimiter({ limit: 10, window: '1m', name: 'stop' })
    await limiter.consume('a')
    bridge?.stop()
    await limiter.consume('a')
    await limiter.consume('a')
    const count = async () =>
      sumOf(await sdk.points('limiter.decisions'), { 'limiter.name': 'stop' })
    expect(await count()).toBe(1)
    bridge = instrumentLimiters({ meterProvider: sdk.meterProvider })
    await limiter.consume('a')
    expect(await count()).toBe(2)
  })
})

describe('on Redis', () => {
  it('counts the store and the blocked-key cache, and times only the round trips', async () => {
    start('redis-otel')
    const limiter = createLimiter({
      limit: 2,
      window: '1m',
      name: 'redis-otel',
      prefix: `otel${process.pid}:`,
      store: new RedisStore({ client: redis.client }),
    })
    // 2 admitted, the 3rd refused by Redis (and cached), the 4th and 5th by the cache
    for (let i = 0; i < 5; i++) await limiter.consume('a')
    expect(table(await sdk.points('limiter.decisions'))).toEqual({
      [row('redis-otel', 'redis-otel', 'allowed', 'redis')]: 2,
      [row('redis-otel', 'redis-otel', 'limited', 'redis')]: 3,
    })
    const [duration] = await sdk.points('limiter.store.duration')
    expect(duration?.attributes).toEqual({ 'limiter.name': 'redis-otel', 'limiter.store': 'redis' })
    expect(duration?.value).toBe(3)
    expect(duration?.histogram?.sum).toBeGreaterThan(0)
    await limiter.reset('a')
  })
})

describe('durations: false', () => {
  it('counts decisions and times none', async () => {
    sdk = metricsSdk()
    bridge = instrumentLimiters({
      meterProvider: sdk.meterProvider,
      limiters: (l) => l.name === 'untimed',
      durations: false,
    })
    const limiter = createLimiter({
      limit: 5,
      window: '1m',
      name: 'untimed',
      prefix: `otel${process.pid}:`,
      store: new RedisStore({ client: redis.client }),
    })
    for (let i = 0; i < 3; i++) await limiter.consume('a')
    expect(table(await sdk.points('limiter.decisions'))).toEqual({
      [row('untimed', 'untimed', 'allowed', 'redis')]: 3,
    })
    expect(await sdk.points('limiter.store.duration')).toEqual([])
    await limiter.reset('a')
  })
})

describe('on a Redis that is down, then comes back', () => {
  it('counts each failure mode, the failures and the open circuits, then the recovery', async () => {
    start(/^down-/)
    const port = await freePort()
    const client = new Redis(port, '127.0.0.1') // default settings, nothing listening yet
    const limiters = (['open', 'closed', 'local'] as FailureMode[]).map((failureMode) =>
      createLimiter({
        limit: 100,
        window: '1m',
        name: `down-${failureMode}`,
        prefix: `otel${process.pid}:`,
        store: new RedisStore({ client }),
        timeout: 100,
        failureMode,
        onError: () => {},
        circuitBreaker: { failureThreshold: 3, coolDown: 1000 },
      }),
    )
    // 3 failures open each circuit; the next 2 calls skip the store (not failures)
    for (let i = 0; i < 5; i++) await Promise.all(limiters.map((l) => l.consume('a')))
    expect(table(await sdk.points('limiter.decisions'))).toEqual({
      [row('down-open', 'down-open', 'failed_open', 'redis')]: 5,
      [row('down-closed', 'down-closed', 'failed_closed', 'redis')]: 5,
      [row('down-local', 'down-local', 'local', 'redis')]: 5,
    })
    expect(await sdk.points('limiter.store.duration')).toEqual([])
    const failures = await sdk.points('limiter.store.failures')
    for (const l of limiters) expect(sumOf(failures, { 'limiter.name': l.name })).toBe(3)
    for (const p of failures)
      expect(['ERR_LIMITER_STORE', 'ERR_LIMITER_TIMEOUT']).toContain(p.attributes['error.type'])
    expect(table(await sdk.points('limiter.circuits.open'))).toEqual({
      'limiter.name=down-open': 1,
      'limiter.name=down-closed': 1,
      'limiter.name=down-local': 1,
    })

    const server = await startRedis([], port)
    try {
      // the probes after the cool-down reach Redis once the client has reconnected
      const deadline = performance.now() + 8000
      for (const l of limiters) {
        while (performance.now() < deadline && (await l.consume('b')).source !== 'store')
          await new Promise((r) => setTimeout(r, 50))
      }
      expect(table(await sdk.points('limiter.circuits.open'))).toEqual({
        'limiter.name=down-open': 0,
        'limiter.name=down-closed': 0,
        'limiter.name=down-local': 0,
      })
      const decisions = await sdk.points('limiter.decisions')
      for (const l of limiters)
        expect(sumOf(decisions, { 'limiter.name': l.name, 'limiter.result': 'allowed' })).toBe(1)
      expect(sumOf(await sdk.points('limiter.store.duration'), {})).toBe(3)
    } finally {
      client.disconnect()
      await server.stop()
    }
  }, 20_000)
})
