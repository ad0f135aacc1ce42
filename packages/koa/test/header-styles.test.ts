// A global limiter and a route limiter in different header styles on one response: no field in
// two syntaxes, no limiter's entry dropped.
import Router from '@koa/router'
import request from 'supertest'
import { describe, it } from 'vitest'
import { expectStylesMerged, STYLE_PAIRS } from '../../../test-support/header-styles.js'
import { type RateLimitOptions, rateLimit } from '../src/index.js'
import { KOA } from './helpers.js'

describe.each(KOA)('$version: header styles of two limiters', ({ Koa }) => {
  it.each(STYLE_PAIRS)('global %j, route %j', async (a, b) => {
    const app = new Koa()
    const router = new Router()
    app.use(rateLimit({ limit: 5, window: '1m', headers: a as RateLimitOptions['headers'] }))
    router.get(
      '/r',
      rateLimit({ limit: 2, window: '1m', headers: b as RateLimitOptions['headers'] }),
      (ctx) => {
        ctx.body = 'ok'
      },
    )
    app.use(router.routes())
    const res = await request(app.callback()).get('/r')
    expectStylesMerged(res.headers, [a, b], 'gc5/1m', 'gc2/1m')
  })
})
