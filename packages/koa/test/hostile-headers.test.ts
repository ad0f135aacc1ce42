// Forged client-address headers through rateLimit() on Koa 2 and 3 (the default key, ctx.ip).
// Without app.proxy no header is read; with it, only X-Forwarded-For (Koa's proxyIpHeader), and
// with maxIpsCount the right hop; rotating IPv6 addresses inside one /56 share one counter.
// (Basic X-Forwarded-For cases are in lifecycle.test.ts.)
import request from 'supertest'
import { describe, expect, it } from 'vitest'
import { forgedAddressHeaders } from '../../../test-support/adapter-helpers.js'
import { expectOneCounterPer56 } from '../../../test-support/client-address.js'
import { ipKey, rateLimit } from '../src/index.js'
import { countingStore, KOA } from './helpers.js'

const FORGED = forgedAddressHeaders(8)

describe.each(KOA)('$version: forged address headers', ({ Koa }) => {
  const appWith = (options: { proxy?: boolean; maxIpsCount?: number }, limit: number) => {
    const store = countingStore()
    const app = new Koa(options)
    // Forged headers are the point here: the ignored-header warning has its own test.
    app.use(rateLimit({ limit, window: '1m', store, warnings: false }))
    app.use((ctx) => {
      ctx.body = ipKey(ctx.ip)
    })
    return { app: app.callback(), store }
  }
  const send = (app: ReturnType<typeof appWith>['app'], headers: Record<string, string>) => {
    let req = request(app).get('/')
    for (const [name, value] of Object.entries(headers)) req = req.set(name, value)
    return req
  }

  it.each([
    ['without app.proxy', {}],
    ['with app.proxy', { proxy: true }],
  ])('%s, X-Real-IP, Forwarded and the rest are ignored: one counter', async (_name, options) => {
    const { app, store } = appWith(options, 3)
    const statuses: number[] = []
    for (const headers of FORGED) statuses.push((await send(app, headers)).status)
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429, 429, 429])
    expect(new Set(store.keys)).toEqual(new Set(['127.0.0.1']))
  })

  it('with app.proxy and maxIpsCount 1, forged hops left of the proxy’s change nothing', async () => {
    const { app, store } = appWith({ proxy: true, maxIpsCount: 1 }, 3)
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) {
      const res = await send(app, { 'x-forwarded-for': `10.9.9.${i}, 198.51.100.7` })
      statuses.push(res.status)
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429])
    expect(new Set(store.keys)).toEqual(new Set(['198.51.100.7']))
  })

  it('rotating IPv6 addresses inside one /56, in any spelling, share one counter', async () => {
    const { app, store } = appWith({ proxy: true }, 10)
    await expectOneCounterPer56(async (headers) => (await send(app, headers)).status, store)
  })
})
