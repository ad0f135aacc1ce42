// Forged client-address headers through the plugin on Fastify 4 and 5 (the default key,
// request.ip). Without trustProxy no header is read; with it, only X-Forwarded-For, and with the
// proxies' addresses the right hop; rotating IPv6 addresses inside one /56 share one counter. (Basic X-Forwarded-For cases are in routes.test.ts.)
import { describe, expect, it } from 'vitest'
import { forgedAddressHeaders } from '../../../test-support/adapter-helpers.js'
import { expectOneCounterPer56 } from '../../../test-support/client-address.js'
import { ipKey, rateLimit } from '../src/index.js'
import { countingStore, FASTIFY } from './helpers.js'

const FORGED = forgedAddressHeaders(8)

describe.each(FASTIFY)('$version: forged address headers', ({ fastify }) => {
  const appWith = async (trustProxy: boolean | string, limit: number) => {
    const store = countingStore()
    const app = fastify({ trustProxy })
    // Forged headers are the point here: the ignored-header warning has its own test.
    await app.register(rateLimit, { limit, window: '1m', store, warnings: false })
    app.get('/', async (request) => ipKey(request.ip))
    return { app, store }
  }

  it.each([
    ['without trustProxy', false],
    ['with trustProxy', true],
  ])('%s, X-Real-IP, Forwarded and the rest are ignored: one counter', async (_name, trust) => {
    const { app, store } = await appWith(trust, 3)
    const statuses: number[] = []
    for (const headers of FORGED)
      statuses.push((await app.inject({ url: '/', headers })).statusCode)
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429, 429, 429])
    expect(new Set(store.keys)).toEqual(new Set(['127.0.0.1']))
  })

  // By address: a hop count (trustProxy: 1) trusts the next hop on Fastify 4 but nothing at all on
  // Fastify 5, which fails closed since it cannot check the immediate peer.
  it.each<[string, string, string, string]>([
    ['the proxy address', '127.0.0.1', '10.9.9.{i}, 198.51.100.7', '198.51.100.7'],
    [
      'a chain of proxies',
      '127.0.0.1, 10.0.0.0/8',
      '192.0.2.{i}, 198.51.100.7, 10.0.0.2, 10.0.0.1',
      '198.51.100.7',
    ],
  ])(
    'with trustProxy %s, the right hop is the key; forged hops to its left change nothing',
    async (_name, trust, xff, expected) => {
      const { app, store } = await appWith(trust, 3)
      const statuses: number[] = []
      for (let i = 0; i < 6; i++) {
        const headers = { 'x-forwarded-for': xff.replace('{i}', String(i)) }
        statuses.push((await app.inject({ url: '/', headers })).statusCode)
      }
      expect(statuses).toEqual([200, 200, 200, 429, 429, 429])
      expect(new Set(store.keys)).toEqual(new Set([expected]))
    },
  )

  it('rotating IPv6 addresses inside one /56, in any spelling, share one counter', async () => {
    const { app, store } = await appWith(true, 10)
    await expectOneCounterPer56(
      async (headers) => (await app.inject({ url: '/', headers })).statusCode,
      store,
    )
  })
})
