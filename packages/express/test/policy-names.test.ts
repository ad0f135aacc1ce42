// Regression, on Express 4 and 5: a route limiter with several policies answered
// `RateLimit-Policy: "route-a GET /r";...` (the route scope in each member's name), while the
// README shows the policies' own names. The scope belongs to the counter's key only.
import request from 'supertest'
import { describe, expect, it } from 'vitest'
import { MemoryStore, rateLimit } from '../src/index.js'
import { countingStore, EXPRESS } from './helpers.js'

describe.each(EXPRESS)('$version', ({ express }) => {
  it("a route limiter's headers and problem body name its policies as given", async () => {
    const store = countingStore()
    const app = express()
    const limits = [
      { name: 'route-a', limit: 1, window: '1m' },
      { name: 'route-b', limit: 5, window: '1h' },
    ]
    // a counting store has one policy per call: the two policies count in a MemoryStore
    app.get('/r', rateLimit({ limits, store: new MemoryStore() }), (_req, res) => {
      res.send('r')
    })
    app.get('/s', rateLimit({ limit: 1, window: '1m', store }), (_req, res) => {
      res.send('s')
    })
    const first = await request(app).get('/r')
    expect(first.headers['ratelimit-policy']).toBe('"route-a";q=1;w=60, "route-b";q=5;w=3600')
    expect(first.headers.ratelimit).toMatch(/^"route-a";r=0;t=\d+, "route-b";r=4;t=\d+$/)
    const refused = await request(app).get('/r')
    expect(refused.status).toBe(429)
    expect(refused.body['violated-policies']).toEqual(['route-a'])
    expect((await request(app).get('/s')).headers['ratelimit-policy']).toBe('"gc1/1m";q=1;w=60')
    // the route scope is still in the counter's key
    expect(store.keys).toEqual(['GET /s#127.0.0.1'])
  })
})
