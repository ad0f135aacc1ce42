// Test support: the shared adapter behaviour on a real Redis (see adapter-contract.ts).
import { describe, expect, it } from 'vitest'
import type { AdapterHarness } from './adapter-contract.js'
import { countingStore, freshPrefix, type StoreLike, until } from './adapter-helpers.js'

/** Runs the shared behaviour on a real Redis: `redis.client()` is a client, `redis.store()` a RedisStore on it. */
export function describeRedisContract(
  name: string,
  harness: AdapterHarness,
  redis: { readonly client: () => unknown; readonly store: () => StoreLike },
): void {
  describe(name, () => {
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
