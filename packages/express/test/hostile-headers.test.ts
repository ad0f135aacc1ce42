// Forged client-address headers through rateLimit() on Express 4 and 5 (the default key, the
// client IP). Without 'trust proxy' no header is read; with it, Express's req.ip picks the right
// hop of X-Forwarded-For and nothing else; rotating IPv6 addresses inside one /56 share one counter.
// (Basic X-Forwarded-For cases are in lifecycle.test.ts.)
import request from 'supertest'
import { describe, expect, it } from 'vitest'
import { forgedAddressHeaders } from '../../../test-support/adapter-helpers.js'
import { expectOneCounterPer56 } from '../../../test-support/client-address.js'
import { ipKey, rateLimit } from '../src/index.js'
import { countingStore, EXPRESS } from './helpers.js'

const FORGED = forgedAddressHeaders(12, true)

describe.each(EXPRESS)('$version: forged address headers', ({ express }) => {
  const appWith = (trust: unknown, limit: number) => {
    const store = countingStore()
    const app = express()
    if (trust !== undefined) app.set('trust proxy', trust)
    // Forged headers are the point here: the ignored-header warning has its own test.
    app.use(rateLimit({ limit, window: '1m', store, warnings: false }))
    app.get('/', (req, res) => {
      res.send(ipKey(req.ip))
    })
    return { app, store }
  }

  const send = (app: ReturnType<typeof appWith>['app'], headers: Record<string, string>) => {
    let req = request(app).get('/')
    for (const [name, value] of Object.entries(headers)) req = req.set(name, value)
    return req
  }

  it('without trust proxy, every forged header is ignored: one counter for the socket address', async () => {
    const { app, store } = appWith(undefined, 5)
    const statuses: number[] = []
    for (const headers of FORGED) statuses.push((await send(app, headers)).status)
    expect(statuses).toEqual([...Array(5).fill(200), ...Array(7).fill(429)])
    expect(new Set(store.keys)).toEqual(new Set(['127.0.0.1']))
  })

  it('with trust proxy, X-Real-IP, Forwarded and the rest are still ignored (Express reads X-Forwarded-For only)', async () => {
    const { app, store } = appWith('loopback', 5)
    for (const headers of FORGED) {
      const { 'x-forwarded-for': _xff, ...others } = headers
      await send(app, others)
    }
    expect(new Set(store.keys)).toEqual(new Set(['127.0.0.1']))
  })

  it.each<[string, unknown, (i: number) => string, string]>([
    // Our one proxy appends the address it saw; whatever the client put before it is forged.
    ['1 hop', 1, (i) => `10.9.9.${i}, 198.51.100.7`, '198.51.100.7'],
    ['loopback', 'loopback', (i) => `10.9.9.${i}, 198.51.100.7`, '198.51.100.7'],
    // A chain of known proxies: the first address from the right that is not one of them.
    [
      'loopback + 10.0.0.0/8',
      'loopback, 10.0.0.0/8',
      (i) => `192.0.2.${i}, 198.51.100.7, 10.0.0.2, 10.0.0.1`,
      '198.51.100.7',
    ],
    ['2 hops', 2, (i) => `192.0.2.${i}, 198.51.100.7, 10.0.0.1`, '198.51.100.7'],
  ])(
    'with trust proxy %s, the right hop is the key; forged hops to its left change nothing',
    async (_name, trust, xff, expected) => {
      const { app, store } = appWith(trust, 3)
      const statuses: number[] = []
      for (let i = 0; i < 6; i++) {
        const res = await send(app, { 'x-forwarded-for': xff(i), 'x-real-ip': `203.0.113.${i}` })
        statuses.push(res.status)
        if (res.status === 200) expect(res.text).toBe(expected)
      }
      expect(statuses).toEqual([200, 200, 200, 429, 429, 429])
      expect(new Set(store.keys)).toEqual(new Set([expected]))
    },
  )

  it('rotating IPv6 addresses inside one /56, in any spelling, share one counter; the next /56 has its own', async () => {
    const { app, store } = appWith('loopback', 10)
    await expectOneCounterPer56(async (headers) => (await send(app, headers)).status, store)
  })

  it('an IPv4-mapped IPv6 address shares the IPv4 counter', async () => {
    const { app } = appWith('loopback', 1)
    expect((await send(app, { 'x-forwarded-for': '198.51.100.9' })).status).toBe(200)
    expect((await send(app, { 'x-forwarded-for': '::ffff:198.51.100.9' })).status).toBe(429)
  })
})
