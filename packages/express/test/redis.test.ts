// rateLimit() on a real Redis (a private redis-server started by this file), Express 4 and 5.
import { Redis } from 'ioredis'
import request from 'supertest'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RedisProcess, startRedis } from '../../../test-support/redis.js'
import { RedisStore, rateLimit } from '../src/index.js'
import { countingStore, EXPRESS } from './helpers.js'

let server: RedisProcess
let redis: Redis

beforeAll(async () => {
  server = await startRedis()
  redis = new Redis(server.port, '127.0.0.1')
})

afterAll(async () => {
  redis?.disconnect()
  await server?.stop()
})

let run = 0
/** A prefix of its own for each test, so tests never see each other's counters. */
const freshPrefix = () => `t${++run}:`

describe.each(EXPRESS)('$version on Redis', ({ express }) => {
  it('limits a login route per e-mail with sliding-log, as in the README', async () => {
    const prefix = freshPrefix()
    const app = express()
    app.use(express.json())
    app.post(
      '/login',
      rateLimit({
        limit: 2,
        window: '15m',
        algorithm: 'sliding-log',
        key: (req) => `${req.body.email}`,
        redis,
        prefix,
      }),
      (_req, res) => {
        res.send('welcome')
      },
    )
    const login = (email: string) => request(app).post('/login').send({ email })
    expect((await login('a@example.com')).status).toBe(200)
    expect((await login('a@example.com')).status).toBe(200)
    const limited = await login('a@example.com')
    expect(limited.status).toBe(429)
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(800)
    expect((await login('b@example.com')).status).toBe(200)
    const keys = await redis.keys(`${prefix}*`)
    expect(keys.some((k) => k.includes('POST /login#a@example.com'))).toBe(true)
  })

  it('two app instances with the same definition share one counter', async () => {
    const prefix = freshPrefix()
    const makeApp = () => {
      const app = express()
      app.use(rateLimit({ limit: 3, window: '1m', redis, prefix }))
      app.get('/', (_req, res) => {
        res.send('ok')
      })
      return app
    }
    const [a, b] = [makeApp(), makeApp()]
    expect((await request(a).get('/')).status).toBe(200)
    expect((await request(b).get('/')).status).toBe(200)
    expect((await request(a).get('/')).headers.ratelimit).toMatch(/;r=0;/)
    expect((await request(b).get('/')).status).toBe(429)
  })

  it('per-route limiters and the global one keep separate counters in Redis', async () => {
    const prefix = freshPrefix()
    const app = express()
    app.use(rateLimit({ limit: 2, window: '1m', redis, prefix }))
    app.get('/a', rateLimit({ limit: 2, window: '1m', redis, prefix }), (_req, res) => {
      res.send('a')
    })
    app.get('/b', rateLimit({ limit: 1, window: '1m', redis, prefix }), (_req, res) => {
      res.send('b')
    })
    const a = await request(app).get('/a')
    expect(a.headers.ratelimit).toMatch(/^"sw2\.60000";r=1;t=\d+, "sw2\.60000 GET \/a";r=1;t=\d+$/)
    const b = await request(app).get('/b')
    expect(b.status).toBe(200)
    expect(b.headers.ratelimit).toMatch(/"sw1\.60000 GET \/b";r=0;/)
    expect((await request(app).get('/a')).status).toBe(429) // the global limit of 2 is used up
  })

  it('skipFailedRequests refunds exactly the failed request on sliding-log', async () => {
    const store = countingStore(new RedisStore({ client: redis }))
    const app = express()
    app.get(
      '/',
      rateLimit({
        limit: 2,
        window: '1m',
        algorithm: 'sliding-log',
        store,
        prefix: freshPrefix(),
        skipFailedRequests: true,
      }),
      (req, res) => {
        res.sendStatus(req.query.fail === undefined ? 200 : 500)
      },
    )
    for (let i = 0; i < 3; i++) expect((await request(app).get('/?fail=1')).status).toBe(500)
    await new Promise((r) => setTimeout(r, 50))
    expect(store.refunds).toBe(3)
    expect((await request(app).get('/')).status).toBe(200)
    expect((await request(app).get('/')).status).toBe(200)
    expect((await request(app).get('/')).status).toBe(429)
  })
})
