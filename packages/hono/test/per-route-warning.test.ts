// One limiter without a `name` on two Hono routes counts each on its own (one hono-rate-limiter
// middleware is one budget wherever it is used): the limiter says so once (LIMITER_PER_ROUTE).
import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { warningsDuring } from '../../../test-support/adapter-helpers.js'
import { rateLimit } from '../src/index.js'
import { get, listen } from './helpers.js'

describe('LIMITER_PER_ROUTE on Hono', () => {
  it('one unnamed limiter on two routes warns once; a named one stays quiet', async () => {
    const warnings = await warningsDuring(async () => {
      const app = new Hono()
      const shared = rateLimit({ limit: 5, window: '1m', trustProxy: 1 })
      const named = rateLimit({ limit: 5, window: '1m', trustProxy: 1, name: 'hono-shared' })
      app.get('/a', shared, (c) => c.text('ok'))
      app.get('/b', shared, (c) => c.text('ok'))
      app.get('/c', named, (c) => c.text('ok'))
      app.get('/d', named, (c) => c.text('ok'))
      const { url } = await listen(app)
      for (const path of ['/a', '/b', '/a', '/c', '/d'])
        expect((await get(`${url}${path}`, { 'x-forwarded-for': '203.0.113.9' })).status).toBe(200)
    })
    expect(warnings.map((w) => w.code)).toEqual(['LIMITER_PER_ROUTE'])
    expect(warnings[0]?.message).toContain('"/a" and on "/b"')
  })
})
