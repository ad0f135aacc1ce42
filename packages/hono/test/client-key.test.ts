// The default key on Hono (the Fetch kit): the shared client-key contract, where the
// trust-everything setting is `trustProxy: true`; and `warnings: false` silences it.
import { MemoryStore } from '@limiter/core'
import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { countingStore, warningsDuring } from '../../../test-support/adapter-helpers.js'
import { clientKeyContract } from '../../../test-support/client-key-contract.js'
import { type RateLimitOptions, rateLimit } from '../src/index.js'
import { get, listen } from './helpers.js'

async function appWith(options: Partial<RateLimitOptions>) {
  const store = countingStore(new MemoryStore())
  const app = new Hono()
  app.use(rateLimit({ limit: 1, window: '1m', store, ...options } as RateLimitOptions))
  app.get('/', (c) => c.text('ok'))
  const { url } = await listen(app)
  const status = async (xff: string) => (await get(url, { 'x-forwarded-for': xff })).status
  return { status, keys: () => store.keys }
}

describe('the client address on Hono', () => {
  clientKeyContract({
    behindOne: () => appWith({ trustProxy: 1 }),
    trustingAll: () => appWith({ trustProxy: true }),
    hint: '`trustProxy: 1`',
  })

  it('no trust-proxy warning with warnings: false', async () => {
    const warnings = await warningsDuring(async () => {
      const app = await appWith({ trustProxy: true, warnings: false })
      expect(await app.status('203.0.113.1')).toBe(200)
    })
    expect(warnings).toEqual([])
  })
})
