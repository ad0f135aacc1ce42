// The README's proxy recipe, `new Koa({ proxy: true, maxIpsCount: 1 })`, on Koa 2 and 3: behind
// one proxy, clients the proxy forwards get a budget each; without the recipe they all share the
// proxy's; with `proxy` but no `maxIpsCount`, a client picks its own address.
import request from 'supertest'
import { describe, expect, it } from 'vitest'
import { captureWarnings } from '../../../test-support/adapter-helpers.js'
import { rateLimit } from '../src/index.js'
import { countingStore, KOA } from './helpers.js'

// What one proxy sends for a client: the client's own X-Forwarded-For, if any, then the address
// the proxy saw (the supertest connection itself comes from 127.0.0.1, the proxy's address).
const viaProxy = (client: string, forged?: string) => ({
  'x-forwarded-for': forged === undefined ? client : `${forged}, ${client}`,
})

const A = '198.51.100.1'
const B = '198.51.100.2'

describe.each(KOA)('$version', ({ Koa }) => {
  const appWith = (options: { proxy?: boolean; maxIpsCount?: number }) => {
    const store = countingStore()
    const app = new Koa(options)
    app.use(rateLimit({ limit: 1, window: '1m', store }))
    app.use((ctx) => {
      ctx.body = 'ok'
    })
    const handler = app.callback()
    const status = async (headers: Record<string, string>) =>
      (await request(handler).get('/').set(headers)).status
    return { status, store }
  }

  it('with new Koa({ proxy: true, maxIpsCount: 1 }), two forwarded clients get a budget each', async () => {
    const capture = captureWarnings()
    try {
      const { status, store } = appWith({ proxy: true, maxIpsCount: 1 }) // the README's line
      expect(await status(viaProxy(A))).toBe(200)
      expect(await status(viaProxy(B))).toBe(200)
      expect(await status(viaProxy(A))).toBe(429)
      // An address the client put in front of the proxy's is not read: still client A.
      expect(await status(viaProxy(A, '203.0.113.7'))).toBe(429)
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
      const { status, store } = appWith({})
      expect(await status(viaProxy(A))).toBe(200)
      expect(await status(viaProxy(B))).toBe(429)
      expect(store.keys).toEqual(['127.0.0.1', '127.0.0.1'])
      await new Promise((r) => setImmediate(r))
      expect(capture.warnings.map((w) => (w as { code?: string }).code)).toEqual([
        'LIMITER_FORWARDED_IGNORED',
      ])
    } finally {
      capture.stop()
    }
  })

  it('with proxy but no maxIpsCount, a client that forges the header gets fresh budgets', async () => {
    const { status, store } = appWith({ proxy: true })
    expect(await status(viaProxy(A))).toBe(200)
    expect(await status(viaProxy(A, '203.0.113.7'))).toBe(200)
    expect(await status(viaProxy(A, '203.0.113.8'))).toBe(200)
    expect(store.keys).toEqual([A, '203.0.113.7', '203.0.113.8'])
  })
})
