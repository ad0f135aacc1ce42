// rateLimit() with the embedded MemoryStore, through supertest, on Express 4 and 5: route scopes,
// the response lifecycle and the client IP. (Refunds by status are in the shared adapter contract.)
import { MemoryStore } from '@limiter/core'
import request from 'supertest'
import { describe, expect, it } from 'vitest'
import {
  expectForwardedIgnored,
  expectForwardedRead,
  type SendForwarded,
} from '../../../test-support/client-address.js'
import { ipKey, rateLimit } from '../src/index.js'
import { countingStore, EXPRESS } from './helpers.js'

describe.each(EXPRESS)('$version', ({ express }) => {
  describe('route scopes', () => {
    it('per-route limiters and a global one never share counters, even with one store', async () => {
      const store = new MemoryStore()
      const app = express()
      app.use(rateLimit({ limit: 2, window: '1m', store }))
      app.get('/a', rateLimit({ limit: 2, window: '1m', store }), (_req, res) => {
        res.send('a')
      })
      app.get('/b', rateLimit({ limit: 2, window: '1m', store }), (_req, res) => {
        res.send('b')
      })
      const a = await request(app).get('/a')
      // The global and /a limiters have the same policy (and name: the route scope is in the key
      // only), and each counted this request once: two equal members, sent once.
      expect(a.headers.ratelimit).toMatch(/^"gc2\/1m";r=1;t=\d+$/)
      const b = await request(app).get('/b')
      expect(b.status).toBe(200)
      // the global limiter's second request, /b's first
      expect(b.headers.ratelimit).toMatch(/^"gc2\/1m";r=0;t=\d+, "gc2\/1m";r=1;t=\d+$/)
    })

    it('one limiter instance on two routes counts per route; limiters named alike share', async () => {
      const store = new MemoryStore()
      const perRoute = rateLimit({ limit: 1, window: '1m', store })
      const shared = rateLimit({ limit: 1, window: '1m', store, name: 'shared' })
      const sharedToo = rateLimit({ limit: 1, window: '1m', store, name: 'shared' })
      const app = express()
      app.get('/x', perRoute, (_req, res) => res.send('x'))
      app.get('/y', perRoute, (_req, res) => res.send('y'))
      app.get('/s1', shared, (_req, res) => res.send('s1'))
      app.get('/s2', sharedToo, (_req, res) => res.send('s2'))
      expect((await request(app).get('/x')).status).toBe(200)
      expect((await request(app).get('/y')).status).toBe(200)
      expect((await request(app).get('/x')).status).toBe(429)
      expect((await request(app).get('/s1')).status).toBe(200)
      expect((await request(app).get('/s2')).status).toBe(429)
    })

    it('uses the route pattern, not the raw URL; HEAD counts with GET, and the mount path ignores case', async () => {
      const store = countingStore()
      const app = express()
      const router = express.Router()
      router.get('/users/:id', rateLimit({ limit: 2, window: '1m', store }), (_req, res) => {
        res.send('u')
      })
      app.use('/api', router)
      expect((await request(app).get('/api/users/1')).status).toBe(200)
      expect((await request(app).head('/api/users/2')).status).toBe(200)
      expect((await request(app).get('/API/users/3')).status).toBe(429)
      expect(new Set(store.keys)).toEqual(new Set(['GET /api/users/:id#127.0.0.1']))
    })

    it('a limiter mounted on a path is scoped to it', async () => {
      const store = countingStore()
      const app = express()
      app.use(rateLimit({ limit: 5, window: '1m', store }))
      app.use('/api', rateLimit({ limit: 5, window: '1m', store }))
      app.get('/api/x', (_req, res) => {
        res.send('x')
      })
      await request(app).get('/api/x')
      expect(store.keys).toEqual(['127.0.0.1', '/api#127.0.0.1'])
    })
  })

  describe('the response lifecycle', () => {
    it('never writes headers after the response has started', async () => {
      const app = express()
      app.use((_req, res, next) => {
        res.writeHead(200, { 'content-type': 'text/plain' })
        res.write('early ')
        next()
      })
      app.use(rateLimit({ limit: 1, window: '1m' }))
      app.get('/', (_req, res) => {
        res.end('late')
      })
      const first = await request(app).get('/')
      expect(first.text).toBe('early late')
      expect(first.headers.ratelimit).toBeUndefined()
      // Limited after the response started: no 429 is possible; the response is ended, the handler skipped.
      const second = await request(app).get('/')
      expect(second.status).toBe(200)
      expect(second.text).toBe('early ')
    })
  })

  describe('client IP and trust proxy', () => {
    const ipApp = (trust: boolean) => {
      const app = express()
      if (trust) app.set('trust proxy', 'loopback')
      app.use(rateLimit({ limit: 1, window: '1m' }))
      app.get('/', (req, res) => {
        res.send(ipKey(req.ip))
      })
      return app
    }

    const forwarded =
      (app: Parameters<typeof request>[0]): SendForwarded =>
      async (xff) =>
        request(app).get('/').set('x-forwarded-for', xff)

    it('ignores a forged X-Forwarded-For unless the app trusts the proxy, and says so once', async () => {
      await expectForwardedIgnored(() => forwarded(ipApp(false)), "app.set('trust proxy'")
    })

    it("uses Express's req.ip when 'trust proxy' is set, grouping IPv6 by /56", async () => {
      await expectForwardedRead(forwarded(ipApp(true)))
    })
  })
})
