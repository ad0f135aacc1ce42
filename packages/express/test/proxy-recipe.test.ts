// The README's proxy recipe, `app.set('trust proxy', 1)`, on Express 4 and 5: behind one proxy,
// clients the proxy forwards get a budget each; without the recipe they all share the proxy's;
// with `true` instead of the number of proxies, a client picks its own address.
import type { Express } from 'express'
import request from 'supertest'
import { describe, expect, it } from 'vitest'
import { captureWarnings } from '../../../test-support/adapter-helpers.js'
import { rateLimit } from '../src/index.js'
import { countingStore, EXPRESS } from './helpers.js'

// What one proxy sends for a client: the client's own X-Forwarded-For, if any, then the address
// the proxy saw (the supertest connection itself comes from 127.0.0.1, the proxy's address).
const viaProxy = (client: string, forged?: string) => ({
  'x-forwarded-for': forged === undefined ? client : `${forged}, ${client}`,
})

const A = '198.51.100.1'
const B = '198.51.100.2'

describe.each(EXPRESS)('$version', ({ express }) => {
  const appWith = (trust: boolean | number) => {
    const store = countingStore()
    const app = express()
    if (trust !== false) app.set('trust proxy', trust)
    app.use(rateLimit({ limit: 1, window: '1m', store }))
    app.get('/', (_req, res) => {
      res.send('ok')
    })
    return { app, store }
  }

  const status = async (app: Express, headers: Record<string, string>) =>
    (await request(app).get('/').set(headers)).status

  it("with app.set('trust proxy', 1), two forwarded clients get a budget each", async () => {
    const capture = captureWarnings()
    try {
      const { app, store } = appWith(1) // the README's line
      expect(await status(app, viaProxy(A))).toBe(200)
      expect(await status(app, viaProxy(B))).toBe(200)
      expect(await status(app, viaProxy(A))).toBe(429)
      // An address the client put in front of the proxy's is not read: still client A.
      expect(await status(app, viaProxy(A, '203.0.113.7'))).toBe(429)
      expect(store.keys).toEqual([A, B, A, A])
      await new Promise((r) => setImmediate(r))
      expect(capture.warnings).toEqual([])
    } finally {
      capture.stop()
    }
  })

  it('without it, every forwarded client shares the proxy address and its budget', async () => {
    const capture = captureWarnings()
    try {
      const { app, store } = appWith(false)
      expect(await status(app, viaProxy(A))).toBe(200)
      expect(await status(app, viaProxy(B))).toBe(429)
      expect(store.keys).toEqual(['127.0.0.1', '127.0.0.1'])
      await new Promise((r) => setImmediate(r))
      expect(capture.warnings.map((w) => (w as { code?: string }).code)).toEqual([
        'LIMITER_FORWARDED_IGNORED',
      ])
    } finally {
      capture.stop()
    }
  })

  it("with 'trust proxy' true, a client that forges the header gets fresh budgets", async () => {
    const { app, store } = appWith(true)
    expect(await status(app, viaProxy(A))).toBe(200)
    expect(await status(app, viaProxy(A, '203.0.113.7'))).toBe(200)
    expect(await status(app, viaProxy(A, '203.0.113.8'))).toBe(200)
    expect(store.keys).toEqual([A, '203.0.113.7', '203.0.113.8'])
  })
})
