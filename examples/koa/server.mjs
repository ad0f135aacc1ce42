// A small Koa app behind @limiter/koa: a global limit per client IP, a strict login limit per
// user, and a health route the limiters never see. MemoryStore by default; set REDIS_URL to share
// the counters with every other process on that Redis.
import { bodyParser } from '@koa/bodyparser'
import Router from '@koa/router'
import { rateLimit, userKey } from '@limiter/koa'
import { Redis } from 'ioredis'
import Koa from 'koa'

const port = Number(process.env.PORT ?? 3000)
const redis = process.env.REDIS_URL ? new Redis(process.env.REDIS_URL) : undefined
// `redis` is shorthand for `store: new RedisStore({ client: redis })`; without it each limiter
// keeps its counters in its own in-process MemoryStore.
const store = redis === undefined ? {} : { redis, prefix: 'example-koa:' }

const app = new Koa()
// Behind a proxy or load balancer, trust it so ctx.ip is the client's address, taking only as
// many X-Forwarded-For entries as there are proxies:
//   app.proxy = true
//   app.maxIpsCount = 1

// Registered before the global limiter, so it never reaches it: load balancers may poll freely.
const health = new Router()
health.get('/health', (ctx) => {
  ctx.body = { ok: true }
})
app.use(health.routes())

// Global: 100 requests per minute per client IP (ctx.ip, which honours app.proxy).
app.use(rateLimit({ limit: 100, window: '1m', ...store }))

const router = new Router()

router.get('/', (ctx) => {
  ctx.body = { hello: 'world', remaining: ctx.state.rateLimit?.remaining }
})

// Login: 5 attempts per 15 minutes per email address, exact over any 15 minutes (sliding-log),
// counted in addition to the global limit. Scoped to `POST /login` by default.
const requireEmail = async (ctx, next) => {
  const email = ctx.request.body?.email
  if (typeof email !== 'string' || email.trim() === '') {
    ctx.status = 400
    ctx.body = { error: 'send a JSON body with an "email"' }
    return
  }
  await next()
}

router.post(
  '/login',
  bodyParser(),
  requireEmail,
  rateLimit({
    limit: 5,
    window: '15m',
    algorithm: 'sliding-log',
    key: (ctx) => userKey(ctx.request.body.email.trim().toLowerCase()),
    ...store,
  }),
  (ctx) => {
    // A real app checks the password here. Failed logins count toward the limit; to count only
    // failures, add `skipSuccessfulRequests: true` and answer a good login with 2xx.
    ctx.status = 401
    ctx.body = { error: 'wrong password', attemptsLeft: ctx.state.rateLimit?.remaining }
  },
)

// Search: its own budget per client IP on top of the global one, 10 per second on average with
// bursts of up to 20 (token-bucket).
router.get(
  '/search',
  rateLimit({ limit: 10, window: '1s', algorithm: 'token-bucket', burst: 20, ...store }),
  (ctx) => {
    ctx.body = { results: [], q: ctx.query.q ?? '' }
  },
)

app.use(router.routes())
app.use(router.allowedMethods())

const server = app.listen(port, () => {
  const where = redis === undefined ? 'MemoryStore (this process only)' : 'Redis (REDIS_URL)'
  console.log(`example-koa listening on http://localhost:${port} · counters in ${where}`)
})

function shutdown() {
  server.close()
  server.closeAllConnections()
  redis?.disconnect()
}
process.once('SIGINT', shutdown)
process.once('SIGTERM', shutdown)
