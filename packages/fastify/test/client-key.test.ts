// The default key from request.ip on Fastify 4 and 5: the shared client-key contract, where the
// trust-everything setting is `trustProxy: true`; and the plugin registered inside an
// encapsulated plugin (whose instance inherits the root's options) warns as well.
import { describe, expect, it } from 'vitest'
import { warningsDuring } from '../../../test-support/adapter-helpers.js'
import { clientKeyContract } from '../../../test-support/client-key-contract.js'
import { rateLimit } from '../src/index.js'
import { countingStore, FASTIFY, type Factory } from './helpers.js'

// The plugin registered at the root, or inside an encapsulated plugin of the app.
async function appWith(fastify: Factory, trustProxy: unknown, nested = false) {
  const store = countingStore()
  const app = fastify({ trustProxy } as never)
  const routes = async (scope: typeof app) => {
    await scope.register(rateLimit, { limit: 1, window: '1m', store })
    scope.get('/', async () => 'ok')
  }
  if (nested) await app.register(routes as never)
  else await routes(app)
  const status = async (xff: string) =>
    (await app.inject({ url: '/', headers: { 'x-forwarded-for': xff } })).statusCode
  return { status, keys: () => store.keys, close: () => app.close() }
}

describe.each(FASTIFY)('$version', ({ fastify }) => {
  clientKeyContract({
    behindOne: () => appWith(fastify, '127.0.0.1'),
    trustingAll: () => appWith(fastify, true),
    trustingAllAlso: [['a function that trusts any address', () => appWith(fastify, () => true)]],
    hint: "trustProxy: '10.0.0.0/8'",
  })

  it('trustProxy: true is pointed out once when registered in an encapsulated plugin', async () => {
    const warnings = await warningsDuring(async () => {
      const { status, close } = await appWith(fastify, true, true)
      expect(await status('203.0.113.1')).toBe(200)
      expect(await status('203.0.113.2')).toBe(200)
      await close()
    })
    expect(warnings.map((w) => w.code)).toEqual(['LIMITER_PERMISSIVE_TRUST_PROXY'])
  })
})
