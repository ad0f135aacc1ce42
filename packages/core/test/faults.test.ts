// Redis failures with a default-configured ioredis client: killed, restarted, down at start.
// Every request is answered by the deadline, nothing goes unhandled, the logs stay quiet, and
// limiting resumes by itself.
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { freePort, type RedisProcess, startRedis } from '../../../test-support/redis.js'
import { createLimiter, type Decision, type LimiterError, RedisStore } from '../src/index.js'

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

describe('Redis killed and restarted', () => {
  let server: RedisProcess
  it('answers every request by the deadline during the outage, then resumes on Redis within 2 s', async () => {
    server = await startRedis()
    const port = server.port
    const client = new Redis(port, '127.0.0.1') // default settings: offline queue on, retries on
    const errors: LimiterError[] = []
    const limiter = createLimiter({
      limit: 1_000_000,
      window: '1m',
      store: new RedisStore({ client }),
      timeout: 200,
      failureMode: 'closed',
      onError: (error) => errors.push(error),
    })
    expect((await limiter.consume('k')).remaining).toBe(999_999)
    server.process.kill('SIGKILL')
    await new Promise((r) => server.process.once('exit', r))
    const during = await load(() => limiter.consume('k'), 60, 10)
    expect(during.every((r) => r.ms < 200 + 50)).toBe(true)
    expect(during.every((r) => !r.decision.allowed)).toBe(true)
    // Pending work stays bounded: the circuit and the status check keep the offline queue empty.
    const queued =
      (client as unknown as { offlineQueue?: { length: number } }).offlineQueue?.length ?? 0
    expect(queued).toBeLessThanOrEqual(3)

    const restartedAt = performance.now()
    server = await startRedis([], port)
    let recoveredMs = Number.POSITIVE_INFINITY
    for (let i = 0; i < 100; i++) {
      const d = await limiter.consume('k')
      if (d.allowed) {
        recoveredMs = performance.now() - restartedAt
        break
      }
      await new Promise((r) => setTimeout(r, 50))
    }
    expect(recoveredMs).toBeLessThan(2500)
    expect(errors.length).toBeGreaterThan(0)
    expect(logs).toBe(0)
    expect(unhandled).toEqual([])
    client.disconnect()
    await server.stop()
  })
})

describe('Redis down when the app starts', () => {
  it('answers from failureMode, and limits on Redis once it is up, with no restart', async () => {
    const port = await freePort()
    const client = new Redis(port, '127.0.0.1')
    const limiter = createLimiter({
      limit: 2,
      window: '1m',
      store: new RedisStore({ client }),
      timeout: 150,
      failureMode: 'open',
      onError: () => {},
    })
    const early = await load(() => limiter.consume('s'), 10, 20)
    expect(early.every((r) => r.decision.allowed && r.ms < 150 + 50)).toBe(true)
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
    client.disconnect()
    await server.stop()
  })
})
