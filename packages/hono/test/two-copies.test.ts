// An app made by another copy of Hono (its CommonJS build beside the ESM one the adapter
// imports): the route scope cannot be read, and the error says why and what to do.
import { createRequire } from 'node:module'
import { expect, it } from 'vitest'
import { rateLimit } from '../src/index.js'

const require = createRequire(import.meta.url)

function cjsApp(options: Parameters<typeof rateLimit>[0]) {
  const { Hono } = require('hono') as typeof import('hono')
  const app = new Hono()
  const errors: unknown[] = []
  app.onError((error, c) => {
    errors.push(error)
    return c.text('error', 500)
  })
  app.use(rateLimit(options))
  app.get('/', (c) => c.text('ok'))
  return { app, errors }
}

it('names the two copies of Hono when the route scope cannot be read', async () => {
  const { app, errors } = cjsApp({ limit: 5, window: '1m', ip: () => '203.0.113.7' })
  expect((await app.request('/')).status).toBe(500)
  expect(errors).toHaveLength(1)
  expect(errors[0]).toMatchObject({ name: 'LimiterError', code: 'ERR_LIMITER_UNSUPPORTED' })
  expect(String((errors[0] as Error).message)).toMatch(/another copy of Hono.*`name`/s)
})

it('works across the two copies with a name (no route read)', async () => {
  const { app, errors } = cjsApp({ name: 'api', limit: 1, window: '1m', ip: () => '203.0.113.8' })
  expect((await app.request('/')).status).toBe(200)
  expect((await app.request('/')).status).toBe(429)
  expect(errors).toEqual([])
})
