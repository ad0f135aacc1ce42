// `limits` in a route's config.rateLimit, over the plugin's defaults, on Fastify 4 and 5.
import { describe, expect, it } from 'vitest'
import { rateLimit } from '../src/index.js'
import { FASTIFY } from './helpers.js'

describe.each(FASTIFY)('$version', ({ fastify }) => {
  it("a route's limits replace the plugin's one policy, and a route's policy the plugin's limits", async () => {
    const app = fastify()
    await app.register(rateLimit, { limit: 100, window: '1m', global: false })
    app.get(
      '/two',
      {
        config: {
          rateLimit: {
            limits: [
              { name: 'second', limit: 1, window: '1s', algorithm: 'fixed-window' },
              { name: 'day', limit: 10, window: '1d', algorithm: 'fixed-window' },
            ],
          },
        },
      },
      async () => 'two',
    )
    app.get('/one', { config: { rateLimit: { limit: 1, window: '1m' } } }, async () => 'one')
    const first = await app.inject('/two')
    expect(first.statusCode).toBe(200)
    expect(first.headers['ratelimit-policy']).toBe('"second";q=1;w=1, "day";q=10;w=86400')
    const refused = await app.inject('/two')
    expect(refused.statusCode).toBe(429)
    expect(refused.json()['violated-policies']).toEqual(['second'])
    expect((await app.inject('/one')).headers['ratelimit-policy']).toBe('"gc1/1m";q=1;w=60')
    await app.close()
  })

  it("a route's one policy replaces the plugin's limits", async () => {
    const app = fastify()
    await app.register(rateLimit, {
      limits: [
        { limit: 5, window: '1s' },
        { limit: 50, window: '1h' },
      ],
      global: false,
    })
    app.get('/own', { config: { rateLimit: { limit: 2, window: '1m' } } }, async () => 'own')
    app.get('/inherit', { config: { rateLimit: {} } }, async () => 'inherit')
    expect((await app.inject('/own')).headers['ratelimit-policy']).toBe('"gc2/1m";q=2;w=60')
    expect((await app.inject('/inherit')).headers['ratelimit-policy']).toBe(
      '"gc5/1s";q=5;w=1, "gc50/1h";q=50;w=3600',
    )
    await app.close()
  })
})
