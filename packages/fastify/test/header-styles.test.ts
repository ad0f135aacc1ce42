// The plugin's global limiter and an app.rateLimit() route hook in different header styles on one
// response: no field in two syntaxes, no limiter's entry dropped.
import { describe, it } from 'vitest'
import { expectStylesMerged, STYLE_PAIRS } from '../../../test-support/header-styles.js'
import { type RateLimitOptions, rateLimit } from '../src/index.js'
import { FASTIFY } from './helpers.js'

describe.each(FASTIFY)('$version: header styles of two limiters', ({ fastify }) => {
  it.each(STYLE_PAIRS)('global %j, route %j', async (a, b) => {
    const app = fastify()
    await app.register(rateLimit, {
      limit: 5,
      window: '1m',
      headers: a as RateLimitOptions['headers'],
    })
    app.get(
      '/r',
      {
        preHandler: app.rateLimit({
          limit: 2,
          window: '1m',
          headers: b as RateLimitOptions['headers'],
        }),
      },
      async () => 'ok',
    )
    const res = await app.inject({ url: '/r' })
    expectStylesMerged(res.headers, [a, b], 'gc5/1m', 'gc2/1m')
    await app.close()
  })
})
