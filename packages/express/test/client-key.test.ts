// The default key from req.ip on Express 4 and 5 (the shared client-key contract), and what is
// Express's own: `ipv6Subnet` refused with the way forward, and the settings that stay quiet.
import request from 'supertest'
import { describe, expect, it } from 'vitest'
import { warningsDuring } from '../../../test-support/adapter-helpers.js'
import { clientKeyContract } from '../../../test-support/client-key-contract.js'
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
  return { status, store, keys: () => store.keys }
}

describe.each(EXPRESS)('$version', ({ express }) => {
  clientKeyContract({
    behindOne: async () => appWith(express, 1),
    trustingAll: async () => appWith(express, true),
    trustingAllAlso: [
      ['a function that trusts any address', async () => appWith(express, () => true)],
    ],
    hint: "`app.set('trust proxy', 1)`",
  })

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

  it.each<[string, unknown, Partial<RateLimitOptions>]>([
    ['warnings: false', true, { warnings: false }],
    ['a key of its own', true, { key: () => 'tenant:1' }],
    ['addresses', 'loopback', {}],
    ['a function trusting the proxy in front', (_ip: string, hop: number) => hop < 1, {}],
    ['a function trusting loopback', (ip: string) => /^(::ffff:)?127\./.test(ip), {}],
  ])('no trust-proxy warning with %s', async (_name, trust, options) => {
    const warnings = await warningsDuring(async () => {
      const { status } = appWith(express, trust, options)
      expect(await status('203.0.113.1')).toBe(200)
    })
    expect(warnings.map((w) => w.code)).toEqual([])
  })
})
