// Redis failures with each supported client library at its default settings (ioredis, node-redis
// 4, 5, 6): frozen (SIGSTOP), killed and restarted, down at start, its script cache flushed.
// Every request is answered by the deadline, nothing goes unhandled (an `error` event with no
// listener would crash this process), the logs stay quiet, and limiting resumes by itself.
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
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
    const during = await load(() => limiter.consume('k'), 60, 10)
    expect(during.every((r) => r.ms < 200 + 50)).toBe(true)
    expect(during.every((r) => !r.decision.allowed)).toBe(true)

    const restartedAt = performance.now()
    server = await startRedis([], port)
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
    expect(recoveredMs).toBeLessThan(2500)
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
    const early = await load(() => limiter.consume('s'), 10, 20)
    expect(early.every((r) => r.decision.allowed && r.ms < 150 + 50)).toBe(true)
    // The failure names the server and the client's own error.
    expect(errors).toContainEqual(
      expect.objectContaining({ address: `127.0.0.1:${port}`, clientError: 'ECONNREFUSED' }),
    )
    const server = await startRedis([], port)
    const deadline = performance.now() + 3000
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
        expect(performance.now() - started).toBeLessThan(100 + 150)
        expect(decisions.map((d) => d.allowed)).toEqual([allowed, allowed, allowed])
        expect(failureOf(decisions[0] as Decision)?.code).toBe('ERR_LIMITER_TIMEOUT')
        expect(errors[0]?.code).toBe('ERR_LIMITER_TIMEOUT')
        await new Promise((r) => setTimeout(r, 300))
        const again = await limiter.consume('fresh')
        expect(failureOf(again)).toBeUndefined()
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
