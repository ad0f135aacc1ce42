// The default key from ctx.ip on Koa 2 and 3, where the review found holes: an address with a
// port (Azure Application Gateway's X-Forwarded-For) was one budget per connection, and
// `app.proxy = true` without `maxIpsCount` let a client pick its key silently.
import request from 'supertest'
import { describe, expect, it } from 'vitest'
import { warningsDuring } from '../../../test-support/adapter-helpers.js'
import { rateLimit } from '../src/index.js'
import { countingStore, KOA } from './helpers.js'

// What the tests set on the app: Koa's trust-proxy settings.
interface ProxySettings {
  proxy: boolean
  maxIpsCount: number
}

describe.each(KOA)('$version', ({ Koa }) => {
  function appWith(setup: (app: ProxySettings) => void) {
    const store = countingStore()
    const app = new Koa()
    setup(app)
    app.use(rateLimit({ limit: 1, window: '1m', store }))
    app.use((ctx) => {
      ctx.body = 'ok'
    })
    const handler = app.callback()
    const status = async (xff: string) =>
      (await request(handler).get('/').set('x-forwarded-for', xff)).status
    return { status, store }
  }
  const behindOne = (app: ProxySettings) => {
    app.proxy = true
    app.maxIpsCount = 1
  }

  it.each([
    ['an IPv4 address with a port', '203.0.113.7:50000', '203.0.113.7:50001', '203.0.113.7'],
    ['a bracketed IPv6 address with a port', '[2001:db8::1]:443', '[2001:db8::2]', '2001:db8::/56'],
  ])(
    '%s from the proxy keys as the bare address: one budget, not one per connection',
    async (_name, first, second, key) => {
      const { status, store } = appWith(behindOne)
      expect(await status(first)).toBe(200)
      expect(await status(second)).toBe(429)
      expect(store.keys).toEqual([key, key])
    },
  )

  it('app.proxy = true set on the app, maxIpsCount left at 0, is pointed out once', async () => {
    const warnings = await warningsDuring(async () => {
      const { status } = appWith((app) => {
        app.proxy = true
      })
      expect(await status('203.0.113.1')).toBe(200)
      expect(await status('203.0.113.2')).toBe(200)
    })
    expect(warnings.map((w) => w.code)).toEqual(['LIMITER_PERMISSIVE_TRUST_PROXY'])
    expect(warnings[0]?.message).toContain('`app.maxIpsCount = 1`')
  })

  it('with app.maxIpsCount set, no trust-proxy warning', async () => {
    const warnings = await warningsDuring(async () => {
      expect(await appWith(behindOne).status('203.0.113.1')).toBe(200)
    })
    expect(warnings).toEqual([])
  })
})
