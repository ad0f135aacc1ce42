// Test support: the shared adapter behaviour on a real Redis (see adapter-contract.ts).
import { type EventEmitter, once } from 'node:events'
import { describe, expect, it, vi } from 'vitest'
import { countingStore, freshPrefix, type StoreLike, until } from './adapter-helpers.js'
import type { AdapterHarness } from './harness.js'

/** Runs the shared behaviour on a real Redis: `redis.client()` is a client, `redis.store()` a RedisStore on it. */
export function describeRedisContract(
  name: string,
  harness: AdapterHarness,
  redis: {
    readonly client: () => unknown
    readonly store: () => StoreLike
    /** A client of the same library for a port nothing listens on. */
    readonly unreachable: () => Promise<{ client: unknown; address: string }>
  },
): void {
  describe(name, () => {
    it('a store failure warns once, naming the address, the error and what the limiter does', async () => {
      const { client, address } = await redis.unreachable()
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
      try {
        const send = await harness.app({ limit: 3, window: '1m', redis: client, timeout: 300 })
        // Until a connection attempt has failed, a call waits in the client's queue and times
        // out with no client error to name; from then on until it is ready, the store fails calls
        // at once. Wait for that failure (heard after the store's own listener, added when the
        // app was built) rather than a guessed time, which a busy machine can outlast.
        await once(client as EventEmitter, 'error', { signal: AbortSignal.timeout(10_000) })
        const res = await send('/')
        expect(res.status).toBe(200)
        expect((await send('/')).status).toBe(200)
        expect(warn).toHaveBeenCalledTimes(1)
        const line = String(warn.mock.calls[0]?.[0])
        expect(line).toContain(`Redis at ${address}`)
        expect(line).toContain('ECONNREFUSED')
        expect(line).toContain('failing open')
      } finally {
        warn.mockRestore()
        // (node-redis's disconnect returns a promise, rejected for a client that never connected)
        await Promise.resolve()
          .then(() => (client as { disconnect(): unknown }).disconnect())
          .catch(() => {})
      }
    })

    it('two app instances with the same definition share one counter', async () => {
      const options = { limit: 3, window: '1m', redis: redis.client(), prefix: freshPrefix() }
      const [a, b] = [await harness.app(options), await harness.app(options)]
      expect((await a('/')).status).toBe(200)
      expect((await b('/')).status).toBe(200)
      expect((await a('/')).headers.ratelimit).toMatch(/;r=0;/)
      expect((await b('/')).status).toBe(429)
    })

    it('skipFailedRequests refunds exactly the failed request on sliding-log', async () => {
      const store = countingStore(redis.store())
      const send = await harness.app({
        limit: 2,
        window: '1m',
        algorithm: 'sliding-log',
        store,
        prefix: freshPrefix(),
        skipFailedRequests: true,
      })
      for (let i = 0; i < 3; i++) expect((await send('/?status=500')).status).toBe(500)
      await until(() => store.refunds === 3)
      await new Promise((r) => setTimeout(r, 50))
      expect(store.refunds).toBe(3)
      expect((await send('/')).status).toBe(200)
      expect((await send('/')).status).toBe(200)
      expect((await send('/')).status).toBe(429)
    })
  })
}
