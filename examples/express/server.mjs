// A small Express app behind @limiter/express: a global limit per client IP, a strict login
// limit per user, and a health route the limiters never see. MemoryStore by default; set
// REDIS_URL to share the counters with every other process on that Redis.
import { rateLimit, userKey } from '@limiter/express'
import express from 'express'
import { Redis } from 'ioredis'

const port = Number(process.env.PORT ?? 3000)
const redis = process.env.REDIS_URL ? new Redis(process.env.REDIS_URL) : undefined
// `redis` is shorthand for `store: new RedisStore({ client: redis })`; without it each limiter
// keeps its counters in its own in-process MemoryStore.
const store = redis === undefined ? {} : { redis, prefix: 'example-express:' }

const app = express()

// Registered before the global limiter, so it never reaches it: load balancers may poll freely.
app.get('/health', (_req, res) => {
  res.json({ ok: true })
})

// Global: 100 requests per minute per client IP (req.ip, which honours `trust proxy`).
app.use(rateLimit({ limit: 100, window: '1m', ...store }))

app.get('/', (req, res) => {
  res.json({ hello: 'world', remaining: req.rateLimit?.remaining })
})

// Login: 5 attempts per 15 minutes per email address, exact over any 15 minutes
// (sliding-log), counted in addition to the global limit.
const requireEmail = (req, res, next) => {
  const email = req.body?.email
  if (typeof email !== 'string' || email.trim() === '') {
    res.status(400).json({ error: 'send a JSON body with an "email"' })
    return
  }
  next()
}

app.post(
  '/login',
  express.json(),
  requireEmail,
  rateLimit({
    limit: 5,
    window: '15m',
    algorithm: 'sliding-log',
    key: (req) => userKey(req.body.email.trim().toLowerCase()),
    ...store,
  }),
  (req, res) => {
    // A real app checks the password here. Failed logins count toward the limit; to count
    // only failures, add `skipSuccessfulRequests: true` and answer a good login with 2xx.
    res.status(401).json({ error: 'wrong password', attemptsLeft: req.rateLimit?.remaining })
  },
)

// Search: its own budget per client IP on top of the global one, 10 per second on average
// with bursts of up to 20 (token-bucket).
app.get(
  '/search',
  rateLimit({ limit: 10, window: '1s', algorithm: 'token-bucket', burst: 20, ...store }),
  (req, res) => {
    res.json({ results: [], q: req.query.q ?? '' })
  },
)

const server = app.listen(port, () => {
  const where = redis === undefined ? 'MemoryStore (this process only)' : 'Redis (REDIS_URL)'
  console.log(`example-express listening on http://localhost:${port} · counters in ${where}`)
})

function shutdown() {
  server.close()
  server.closeAllConnections()
  redis?.disconnect()
}
process.once('SIGINT', shutdown)
process.once('SIGTERM', shutdown)
