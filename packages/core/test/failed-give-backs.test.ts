// What `failureMode` answered counted nothing, so nothing of it is given back, and `acquire`
// does not hammer a store that is down. On a real Redis frozen with SIGSTOP (ioredis keeps the
// commands of a frozen server queued and runs them once it resumes, as a slow network does).
import { afterAll, describe, expect, it } from 'vitest'
import { eventually, watchLoad } from '../../../test-support/load.js'
import { startRedis } from '../../../test-support/redis.js'
import { createLimiter, type Decision, failureOf, RedisStore } from '../src/index.js'
import { CLIENTS } from './setup/clients.js'
import { onDecision } from './setup/decisions.js'

const unhandled: unknown[] = []
const onUnhandled = (reason: unknown) => unhandled.push(reason)
process.on('unhandledRejection', onUnhandled)
afterAll(() => {
  process.off('unhandledRejection', onUnhandled)
})

let unique = 0

describe.each(CLIENTS)('$name', (factory) => {
  it("a refund of a 'fail-open' admission gives nothing back once Redis is back", async () => {
    const server = await startRedis()
    const { client, close } = await factory.standalone(server.port)
    try {
      const limiter = createLimiter({
        name: `fo${unique++}`,
        limit: 1,
        window: '1m',
        store: new RedisStore({ client }),
        timeout: 100,
        failureMode: 'open',
        circuitBreaker: { coolDown: 100 },
        onError: () => undefined,
      })
      expect((await limiter.consume('k')).allowed).toBe(true)
      server.process.kill('SIGSTOP')
      let failed: Decision
      try {
        failed = await limiter.consume('k')
        expect(failed.source).toBe('fail-open')
        // (acquire does the same for a caller that aborted meanwhile)
        await limiter.refund('k', 1, failed)
        // a refusal's decision counted nothing either
        await limiter.refund('k', 1, { ...failed, allowed: false })
      } finally {
        server.process.kill('SIGCONT')
      }
      // decided by Redis again: the one request counted is still counted (before the fix: the
      // refund ran once Redis resumed, and this was admitted)
      const load = await watchLoad()
      const again = await eventually(
        async () => {
          const d = await limiter.consume('k')
          return failureOf(d) === undefined ? d : undefined
        },
        load.budget(0, 3000),
      )
      load.stop()
      expect(again).toMatchObject({ allowed: false, source: 'store' })
      expect(unhandled).toEqual([])
    } finally {
      await close()
      await server.stop()
    }
  })

  it("acquire under 'closed' with maxDelay: a waiter asks a frozen Redis about once a second", async () => {
    const server = await startRedis()
    const { client, close } = await factory.standalone(server.port)
    try {
      const limiter = createLimiter({
        name: `fc${unique++}`,
        limit: 10,
        window: '1s',
        maxDelay: '2s',
        store: new RedisStore({ client }),
        timeout: 100,
        failureMode: 'closed',
        onError: () => undefined,
      })
      expect((await limiter.consume('warm')).allowed).toBe(true)
      let asked = 0
      onDecision((told) => {
        if (told.limiter === limiter) asked++
      })
      server.process.kill('SIGSTOP')
      let settled: PromiseSettledResult<Decision>[]
      try {
        const waiters = Array.from({ length: 20 }, (_, i) =>
          limiter.acquire(`w${i}`, { maxWait: '1500ms' }),
        )
        settled = await Promise.allSettled(waiters)
      } finally {
        server.process.kill('SIGCONT')
      }
      expect(settled.every((s) => s.status === 'rejected')).toBe(true)
      // each asks, sleeps the refusal's 1 s Retry-After, asks again, then has no time left: at
      // most 3 asks each (before the fix: a retry every 1 ms, ~500 asks a waiter)
      expect(asked).toBeLessThanOrEqual(20 * 3)
      expect(unhandled).toEqual([])
    } finally {
      await close()
      await server.stop()
    }
  })
})
