// One limiter without a `name` on two Koa routes counts each on its own (one koa-ratelimit
// middleware is one budget wherever it is used): the limiter says so once (LIMITER_PER_ROUTE).
import request from 'supertest'
import { describe, expect, it } from 'vitest'
import { warningsDuring } from '../../../test-support/adapter-helpers.js'
import { rateLimit } from '../src/index.js'
import { KOA_ROUTERS } from './helpers.js'

// a new name per run: one name is one budget in the process
let run = 0

describe.each(KOA_ROUTERS)('$version with $router', ({ Koa, Router }) => {
  it('one unnamed limiter on two routes warns once; a named one stays quiet', async () => {
    const warnings = await warningsDuring(async () => {
      const app = new Koa()
      const router = new Router()
      const shared = rateLimit({ limit: 5, window: '1m' })
      const named = rateLimit({ limit: 5, window: '1m', name: `koa-shared-${run++}` })
      for (const [path, limiter] of [
        ['/a', shared],
        ['/b', shared],
        ['/c', named],
        ['/d', named],
      ] as const)
        router.get(path, limiter, (ctx) => {
          ctx.body = 'ok'
        })
      app.use(router.routes())
      for (const path of ['/a', '/b', '/a', '/c', '/d'])
        expect((await request(app.callback()).get(path)).status).toBe(200)
    })
    expect(warnings.map((w) => w.code)).toEqual(['LIMITER_PER_ROUTE'])
    expect(warnings[0]?.message).toContain('"GET /a" and on "GET /b"')
  })
})
