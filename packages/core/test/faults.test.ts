// Redis failures with each supported client library at its default settings (ioredis, node-redis
// 4, 5, 6): frozen (SIGSTOP), killed and restarted, down at start, its script cache flushed.
// Every request is answered by the deadline, nothing goes unhandled (an `error` event with no
// listener would crash this process), the logs stay quiet, and limiting resumes by itself.
// Latency bounds are the idle ones scaled by the measured event-loop delay (test-support/load.ts),
// capped below what a deadline that never fires would show; checks that decisions come from Redis
// again poll for a while instead of trusting one call with a 100 ms deadline on a busy machine.
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { eventually, watchLoad } from '../../../test-support/load.js'
import { freePort, startRedis } from '../../../test-support/redis.js'
import {
  createLimiter,
  type Decision,
  failureOf,
  type LimiterError,
  RedisStore,
} from '../src/index.js'
import { CLIENTS } from './setup/clients.js'

const unhandled: unknown[] = []
const onUnhandled = (reason: unknown) => unhandled.push(reason)
process.on('unhandledRejection', onUnhandled)
afterAll(() => {
  process.off('unhandledRejection', onUnhandled)
})

let logs: number
beforeEach(() => {
  logs = 0
  vi.spyOn(console, 'error').mockImplementation(() => logs++)
  vi.spyOn(console, 'warn').mockImplementation(() => logs++)
})
afterEach(() => {
  vi.restoreAllMocks()
})

/** Fires `count` consumes spaced by `everyMs`, recording each answer and its latency. */
async function load(consume: () => Promise<Decision>, count: number, everyMs: number) {
  const results: Array<{ decision: Decision; ms: number }> = []
  const pending: Promise<void>[] = []
  for (let i = 0; i < count; i++) {
    const started = performance.now()
    pending.push(
      consume().then(
        (decision) => void results.push({ decision, ms: performance.now() - started }),
      ),
    )
    await new Promise((r) => setTimeout(r, everyMs))
  }
  await Promise.all(pending)
  return results
}

/** Consumes fresh keys until Redis decides one (the circuit closed again), for `withinMs`. */
const decidedByRedis = (consume: (key: string) => Promise<Decision>, withinMs: number) =>
  eventually(async (i) => {
    const decision = await consume(`fresh${i}`)
    return failureOf(decision) === undefined ? decision : undefined
  }, withinMs)

/** Script calls a server has run since it started (or its last CONFIG RESETSTAT). */
async function scriptCalls(port: number): Promise<number> {
  const admin = new Redis(port, '127.0.0.1')
  try {
    const stats = await admin.info('commandstats')
    const calls = (name: string) =>
      Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0)
    return calls('evalsha') + calls('eval')
  } finally {
    admin.disconnect()
  }
}

describe.each(CLIENTS)('$name', (factory) => {
  it('Redis killed and restarted: every request answered by the deadline during the outage, nothing queued for later, Redis decides again within 2 s', async () => {
    let server = await startRedis()
    const port = server.port
    const { client, close } = await factory.standalone(port) // default settings: offline queue on
    const errors: LimiterError[] = []
    const limiter = createLimiter({
      limit: 1_000_000,
      window: '1m',
      store: new RedisStore({ client }),
      timeout: 200,
      failureMode: 'closed',
      onError: (error) => errors.push(error),
    })
    const first = await limiter.consume('k')
    expect(failureOf(first)).toBeUndefined()
    expect(first.remaining).toBe(999_999)
    server.process.kill('SIGKILL')
    await new Promise((r) => server.process.once('exit', r))
    // Without the deadline, the outage's calls wait in the offline queue until the restart,
    // which comes after them: they would never be answered (a cap of 10 keeps the bound < 1 s).
    const loadNow = await watchLoad({ cap: 10 })
    const during = await load(() => limiter.consume('k'), 60, 10)
    const slowest = Math.max(...during.map((r) => r.ms))
    expect(slowest, loadNow.describe(200, 50)).toBeLessThan(loadNow.budget(200, 50))
    expect(during.every((r) => !r.decision.allowed)).toBe(true)

    server = await startRedis([], port)
    const restartedAt = performance.now()
    let recoveredMs = Number.POSITIVE_INFINITY
    let sent = 0
    for (let i = 0; i < 100; i++) {
      sent++
      const d = await limiter.consume('k')
      if (d.allowed) {
        recoveredMs = performance.now() - restartedAt
        break
      }
      await new Promise((r) => setTimeout(r, 50))
    }
    // 2 s idle (reconnect, then the circuit's 1 s cool-down); the loop gives up after 100 tries
    expect(recoveredMs, loadNow.describe(2000, 500)).toBeLessThan(loadNow.budget(2000, 500))
    loadNow.stop()
    // Pending work stayed bounded: the outage's 60 decisions did not wait in the client's
    // offline queue to run on the new server (at most a few sent before the client noticed).
    expect(await scriptCalls(port)).toBeLessThanOrEqual(sent + 3)
    expect(errors.length).toBeGreaterThan(0)
    expect(errors.some((e) => e.message.includes(`127.0.0.1:${port}`))).toBe(true)
    expect(logs).toBe(0)
    expect(unhandled).toEqual([])
    await close()
    await server.stop()
  })

  it('Redis down when the app starts: answers from failureMode, then limits on Redis once it is up', async () => {
    const port = await freePort()
    const { client, close } = await factory.standalone(port, { ready: false })
    const errors: LimiterError[] = []
    const limiter = createLimiter({
      limit: 2,
      window: '1m',
      store: new RedisStore({ client }),
      timeout: 150,
      failureMode: 'open',
      onError: (error) => errors.push(error),
    })
    const loadNow = await watchLoad({ cap: 10 })
    const early = await load(() => limiter.consume('s'), 10, 20)
    expect(early.every((r) => r.decision.allowed)).toBe(true)
    const slowest = Math.max(...early.map((r) => r.ms))
    expect(slowest, loadNow.describe(150, 50)).toBeLessThan(loadNow.budget(150, 50))
    // The failure names the server and the client's own error.
    expect(errors).toContainEqual(
      expect.objectContaining({ address: `127.0.0.1:${port}`, clientError: 'ECONNREFUSED' }),
    )
    const server = await startRedis([], port)
    // eventually limited by Redis (3 s idle: a call answered late by a busy Redis is fail-open)
    const deadline = performance.now() + loadNow.budget(0, 3000)
    loadNow.stop()
    let limited = false
    while (performance.now() < deadline && !limited) {
      limited = !(await limiter.consume('s')).allowed
      await new Promise((r) => setTimeout(r, 50))
    }
    expect(limited).toBe(true)
    expect(logs).toBe(0)
    expect(unhandled).toEqual([])
    await close()
    await server.stop()
  })

  it.each([
    ['open', true],
    ['closed', false],
  ] as const)(
    "Redis frozen (SIGSTOP), '%s': answered by the deadline, then decided by Redis again",
    async (failureMode, allowed) => {
      const server = await startRedis()
      const { client, close } = await factory.standalone(server.port)
      try {
        const errors: LimiterError[] = []
        const limiter = createLimiter({
          limit: 5,
          window: '1m',
          store: new RedisStore({ client }),
          timeout: 100,
          failureMode,
          circuitBreaker: { coolDown: 200 },
          onError: (error) => errors.push(error),
        })
        expect(failureOf(await limiter.consume('warm'))).toBeUndefined()
        const loadNow = await watchLoad()
        server.process.kill('SIGSTOP')
        const started = performance.now()
        let decisions: Decision[]
        try {
          decisions = await Promise.all([
            limiter.consume('a'),
            limiter.consume('b'),
            limiter.consume('c'),
          ])
        } finally {
          server.process.kill('SIGCONT')
        }
        // (without the deadline, the calls would wait for the SIGCONT that comes after them)
        const elapsed = performance.now() - started
        expect(elapsed, loadNow.describe(100, 150)).toBeLessThan(loadNow.budget(100, 150))
        expect(decisions.map((d) => d.allowed)).toEqual([allowed, allowed, allowed])
        expect(failureOf(decisions[0] as Decision)?.code).toBe('ERR_LIMITER_TIMEOUT')
        expect(errors[0]?.code).toBe('ERR_LIMITER_TIMEOUT')
        await new Promise((r) => setTimeout(r, 300))
        // Redis decides again after the circuit's 200 ms cool-down (polled: see decidedByRedis)
        const again = await decidedByRedis((key) => limiter.consume(key), loadNow.budget(0, 2000))
        loadNow.stop()
        expect(again).toMatchObject({ allowed: true, remaining: 4 })
        expect(unhandled).toEqual([])
      } finally {
        await close()
        await server.stop()
      }
    },
  )

  it('SCRIPT FLUSH in a loop: zero failed decisions (NOSCRIPT answered by one EVAL)', async () => {
    const server = await startRedis()
    const { client, close } = await factory.standalone(server.port)
    const admin = new Redis(server.port, '127.0.0.1')
    try {
      const errors: unknown[] = []
      const limiter = createLimiter({
        algorithm: 'sliding-log',
        limit: 1_000_000,
        window: '1m',
        store: new RedisStore({ client }),
        failureMode: 'closed',
        // every decision must come from Redis: no deadline a busy machine can reach (a NOSCRIPT
        // not answered by one EVAL fails at once, as a store error)
        timeout: 10_000,
        onError: (error) => errors.push(error),
      })
      expect(failureOf(await limiter.consume('warm'))).toBeUndefined()
      const flusher = setInterval(() => void admin.script('FLUSH'), 5)
      try {
        for (let round = 0; round < 40; round++) {
          await admin.script('FLUSH')
          const decisions = await Promise.all(
            Array.from({ length: 50 }, (_, i) => limiter.consume(`nf${i % 7}`)),
          )
          expect(decisions.every((d) => d.allowed && failureOf(d) === undefined)).toBe(true)
        }
      } finally {
        clearInterval(flusher)
      }
      const stats = await admin.info('commandstats')
      expect(Number(/cmdstat_eval:calls=(\d+)/.exec(stats)?.[1] ?? 0)).toBeGreaterThanOrEqual(10)
      expect(errors).toEqual([])
    } finally {
      admin.disconnect()
      await close()
      await server.stop()
    }
  })
})
