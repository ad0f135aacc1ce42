// The default key from ctx.ip on Koa 2 and 3: the shared client-key contract, where Koa's
// trust-everything setting is `app.proxy = true` without `maxIpsCount`.
import request from 'supertest'
import { describe } from 'vitest'
import { clientKeyContract } from '../../../test-support/client-key-contract.js'
import { rateLimit } from '../src/index.js'
import { countingStore, KOA } from './helpers.js'

describe.each(KOA)('$version', ({ Koa }) => {
  // behind one proxy: `app.proxy = true` and `app.maxIpsCount = 1`; else maxIpsCount stays 0
  async function appWith(maxIpsCount: number) {
    const store = countingStore()
    const app = new Koa()
    app.proxy = true
    app.maxIpsCount = maxIpsCount
    app.use(rateLimit({ limit: 1, window: '1m', store }))
    app.use((ctx) => {
      ctx.body = 'ok'
    })
    const handler = app.callback()
    const status = async (xff: string) =>
      (await request(handler).get('/').set('x-forwarded-for', xff)).status
    return { status, keys: () => store.keys }
  }

  clientKeyContract({
    behindOne: () => appWith(1),
    trustingAll: () => appWith(0),
    hint: '`app.maxIpsCount = 1`',
  })
})
