// The default key from req.ip on Express 4 and 5, where the review found holes: an address with a
// port (Azure Application Gateway's X-Forwarded-For) was one budget per connection, `ipv6Subnet`
// was refused with no way forward, and `'trust proxy'` true let a client pick its key silently.
import request from 'supertest'
import { describe, expect, it } from 'vitest'
import { warningsDuring } from '../../../test-support/adapter-helpers.js'
import { ipKey, type RateLimitOptions, rateLimit } from '../src/index.js'
import { countingStore, EXPRESS, type Factory } from './helpers.js'

function appWith(express: Factory, trust: unknown, options: Partial<RateLimitOptions> = {}) {
  const store = countingStore()
  const app = express()
  app.set('trust proxy', trust)
  app.use(rateLimit({ limit: 1, window: '1m', store, ...options } as RateLimitOptions))
  app.get('/', (_req, res) => {
    res.send('ok')
  })
  const status = async (xff: string) =>
    (await request(app).get('/').set('x-forwarded-for', xff)).status
  return { status, store }
}

describe.each(EXPRESS)('$version', ({ express }) => {
  it.each([
    ['an IPv4 address with a port', '203.0.113.7:50000', '203.0.113.7:50001', '203.0.113.7'],
    ['a bracketed IPv6 address with a port', '[2001:db8::1]:443', '[2001:db8::2]', '2001:db8::/56'],
  ])(
    '%s from the proxy keys as the bare address: one budget, not one per connection',
    async (_name, first, second, key) => {
      const { status, store } = appWith(express, 1)
      expect(await status(first)).toBe(200)
      expect(await status(second)).toBe(429)
      expect(store.keys).toEqual([key, key])
    },
  )

  it('refuses ipv6Subnet, saying to key by ipKey with it', async () => {
    expect(() =>
      rateLimit({ limit: 1, window: '1m', ipv6Subnet: 56 } as unknown as RateLimitOptions),
    ).toThrow(
      expect.objectContaining({
        option: 'ipv6Subnet',
        message: expect.stringContaining('`key: (req) => ipKey(req.ip, { ipv6Subnet: 56 })`'),
      }),
    )
    // what the hint says works
    const { status, store } = appWith(express, 1, {
      key: (req) => ipKey(req.ip, { ipv6Subnet: 48 }),
    })
    expect(await status('2001:db8:0:1::1')).toBe(200)
    expect(await status('2001:db8:0:ff00::1')).toBe(429)
    expect(store.keys).toEqual(['2001:db8::/48', '2001:db8::/48'])
  })

  it("'trust proxy' true is pointed out once per limiter, naming the number of proxies to set", async () => {
    const warnings = await warningsDuring(async () => {
      const { status } = appWith(express, true)
      expect(await status('203.0.113.1')).toBe(200)
      expect(await status('203.0.113.2')).toBe(200)
    })
    expect(warnings.map((w) => w.code)).toEqual(['LIMITER_PERMISSIVE_TRUST_PROXY'])
    expect(warnings[0]?.name).toBe('LimiterWarning')
    expect(warnings[0]?.message).toContain("`app.set('trust proxy', 1)`")
  })

  it.each<[string, unknown, Partial<RateLimitOptions>]>([
    ['warnings: false', true, { warnings: false }],
    ['a key of its own', true, { key: () => 'tenant:1' }],
    ['a hop count', 1, {}],
    ['addresses', 'loopback', {}],
  ])('no trust-proxy warning with %s', async (_name, trust, options) => {
    const warnings = await warningsDuring(async () => {
      const { status } = appWith(express, trust, options)
      expect(await status('203.0.113.1')).toBe(200)
    })
    expect(warnings.map((w) => w.code)).toEqual([])
  })
})
