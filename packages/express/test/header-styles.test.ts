// A global limiter and a route limiter in different header styles on one response: no field in
// two syntaxes, no limiter's entry dropped (a draft-10 global and a draft-7 route gave
// `RateLimit-Policy: "gc5/1m";q=5;w=60, 2;w=60` and lost the global's RateLimit).
import request from 'supertest'
import { describe, it } from 'vitest'
import { expectStylesMerged, STYLE_PAIRS } from '../../../test-support/header-styles.js'
import { type RateLimitOptions, rateLimit } from '../src/index.js'
import { EXPRESS } from './helpers.js'

describe.each(EXPRESS)('$version: header styles of two limiters', ({ express }) => {
  it.each(STYLE_PAIRS)('global %j, route %j', async (a, b) => {
    const app = express()
    app.use(rateLimit({ limit: 5, window: '1m', headers: a as RateLimitOptions['headers'] }))
    app.get(
      '/r',
      rateLimit({ limit: 2, window: '1m', headers: b as RateLimitOptions['headers'] }),
      (_req, res) => {
        res.send('ok')
      },
    )
    const res = await request(app).get('/r')
    expectStylesMerged(res.headers, [a, b], 'gc5/1m', 'gc2/1m')
  })
})
