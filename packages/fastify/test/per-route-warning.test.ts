// One `app.rateLimit()` hook without a `name` on two Fastify routes counts each on its own: the
// limiter says so once (LIMITER_PER_ROUTE). The plugin's global limiter is one budget: quiet.
import { describe, expect, it } from 'vitest'
import { warningsDuring } from '../../../test-support/adapter-helpers.js'
import { rateLimit } from '../src/index.js'
import { FASTIFY } from './helpers.js'

describe.each(FASTIFY)('$version', ({ fastify }) => {
  it('one unnamed app.rateLimit() hook on two routes warns once; the global limiter stays quiet', async () => {
    const warnings = await warningsDuring(async () => {
      const app = fastify()
      await app.register(rateLimit, { limit: 50, window: '1m' })
      const shared = app.rateLimit({ limit: 5, window: '1m' })
      app.get('/a', { preHandler: shared }, async () => 'a')
      app.get('/b', { preHandler: shared }, async () => 'b')
      app.get('/c', async () => 'c')
      app.get('/d', async () => 'd')
      try {
        for (const url of ['/c', '/d', '/a', '/b', '/a'])
          expect((await app.inject({ method: 'GET', url })).statusCode).toBe(200)
      } finally {
        await app.close()
      }
    })
    expect(warnings.map((w) => w.code)).toEqual(['LIMITER_PER_ROUTE'])
    expect(warnings[0]?.message).toContain('"GET /a" and on "GET /b"')
  })
})
