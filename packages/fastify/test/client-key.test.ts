// The default key from request.ip on Fastify 4 and 5, where the review found holes: an address
// with a port (Azure Application Gateway's X-Forwarded-For) was one budget per connection, and
// `trustProxy: true` let a client pick its key silently.
import { describe, expect, it } from 'vitest'
import { warningsDuring } from '../../../test-support/adapter-helpers.js'
import { rateLimit } from '../src/index.js'
import { countingStore, FASTIFY, type Factory } from './helpers.js'

// The plugin registered at the root, or inside an encapsulated plugin of the app (whose instance
// inherits the root's options).
async function appWith(fastify: Factory, trustProxy: boolean | string, nested = false) {
  const store = countingStore()
  const app = fastify({ trustProxy })
  const routes = async (scope: typeof app) => {
    await scope.register(rateLimit, { limit: 1, window: '1m', store })
    scope.get('/', async () => 'ok')
  }
  if (nested) await app.register(routes as never)
  else await routes(app)
  const status = async (xff: string) =>
    (await app.inject({ url: '/', headers: { 'x-forwarded-for': xff } })).statusCode
  return { status, store }
}

describe.each(FASTIFY)('$version', ({ fastify }) => {
  it.each([
    ['an IPv4 address with a port', '203.0.113.7:50000', '203.0.113.7:50001', '203.0.113.7'],
    ['a bracketed IPv6 address with a port', '[2001:db8::1]:443', '[2001:db8::2]', '2001:db8::/56'],
  ])(
    '%s from the proxy keys as the bare address: one budget, not one per connection',
    async (_name, first, second, key) => {
      const { status, store } = await appWith(fastify, '127.0.0.1')
      expect(await status(first)).toBe(200)
      expect(await status(second)).toBe(429)
      expect(store.keys).toEqual([key, key])
    },
  )

  it.each([
    ['registered on the app', false],
    ['registered in an encapsulated plugin', true],
  ])('trustProxy: true is pointed out once, %s', async (_name, nested) => {
    const warnings = await warningsDuring(async () => {
      const { status } = await appWith(fastify, true, nested)
      expect(await status('203.0.113.1')).toBe(200)
      expect(await status('203.0.113.2')).toBe(200)
    })
    expect(warnings.map((w) => w.code)).toEqual(['LIMITER_PERMISSIVE_TRUST_PROXY'])
    expect(warnings[0]?.message).toContain("trustProxy: '10.0.0.0/8'")
  })

  it("trustProxy by the proxy's address gives no trust-proxy warning", async () => {
    const warnings = await warningsDuring(async () => {
      expect(await (await appWith(fastify, '127.0.0.1')).status('203.0.113.1')).toBe(200)
    })
    expect(warnings).toEqual([])
  })
})
