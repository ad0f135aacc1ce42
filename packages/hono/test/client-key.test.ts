// The default key on Hono (the Fetch kit), where the review found holes: an X-Forwarded-For entry
// with a port (Azure Application Gateway) was one budget per connection, and `trustProxy: true`
// let a client pick its key silently.
import { MemoryStore } from '@limiter/core'
import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { countingStore, warningsDuring } from '../../../test-support/adapter-helpers.js'
import { type RateLimitOptions, rateLimit } from '../src/index.js'
import { get, listen } from './helpers.js'

async function appWith(options: Partial<RateLimitOptions>) {
  const store = countingStore(new MemoryStore())
  const app = new Hono()
  app.use(rateLimit({ limit: 1, window: '1m', store, ...options } as RateLimitOptions))
  app.get('/', (c) => c.text('ok'))
  const { url } = await listen(app)
  const status = async (xff: string) => (await get(url, { 'x-forwarded-for': xff })).status
  return { status, store }
}

describe('the client address on Hono', () => {
  it.each([
    ['an IPv4 address with a port', '203.0.113.7:50000', '203.0.113.7:50001', '203.0.113.7'],
    ['a bracketed IPv6 address with a port', '[2001:db8::1]:443', '[2001:db8::2]', '2001:db8::/56'],
  ])(
    '%s from the proxy keys as the bare address: one budget, not one per connection',
    async (_name, first, second, key) => {
      const { status, store } = await appWith({ trustProxy: 1 })
      expect(await status(first)).toBe(200)
      expect(await status(second)).toBe(429)
      expect(store.keys).toEqual([key, key])
    },
  )

  it('trustProxy: true is pointed out once, naming the number of proxies to pass', async () => {
    const warnings = await warningsDuring(async () => {
      const { status } = await appWith({ trustProxy: true })
      expect(await status('203.0.113.1')).toBe(200)
      expect(await status('203.0.113.2')).toBe(200)
    })
    expect(warnings.map((w) => w.code)).toEqual(['LIMITER_PERMISSIVE_TRUST_PROXY'])
    expect(warnings[0]?.message).toContain('`trustProxy: 1`')
  })

  it.each<[string, Partial<RateLimitOptions>]>([
    ['trustProxy: 1', { trustProxy: 1 }],
    ['warnings: false', { trustProxy: true, warnings: false }],
  ])('no trust-proxy warning with %s', async (_name, options) => {
    const warnings = await warningsDuring(async () => {
      expect(await (await appWith(options)).status('203.0.113.1')).toBe(200)
    })
    expect(warnings).toEqual([])
  })
})
