// A small Fastify app behind @limiter/fastify: a global limit per client IP, a strict login limit
// per user, and an exempt health route. MemoryStore by default; set REDIS_URL to share the
// counters with every other process on that Redis.
import rateLimit, { userKey } from '@limiter/fastify'
import Fastify from 'fastify'
import { Redis } from 'ioredis'

const port = Number(process.env.PORT ?? 3000)
const redis = process.env.REDIS_URL ? new Redis(process.env.REDIS_URL) : undefined

// trustProxy makes request.ip (the default key) the client behind your load balancer; without
// it a forged X-Forwarded-For changes nothing.
const app = Fastify({ trustProxy: process.env.TRUST_PROXY === '1' })

// Global: 100 requests per minute per client IP. The plugin's options (here `redis`) are also the
// defaults of every per-route limiter. Without `redis`, all of the plugin's limiters share one
// in-process MemoryStore. Await it: routes declared before the plugin has loaded are not limited.
await app.register(rateLimit, {
  limit: 100,
  window: '1m',
  ...(redis ? { redis, prefix: 'example-fastify:' } : {}),
})

// Exempt: load balancers may poll freely.
app.get('/health', { config: { rateLimit: false } }, async () => ({ ok: true }))

app.get('/', async (request) => ({ hello: 'world', remaining: request.rateLimit?.remaining }))

// Login: its own limit replaces the global one on this route: 5 attempts per 15 minutes per
// email address, exact over any 15 minutes (sliding-log). It runs as a preHandler, after the
// body is parsed and validated, so the key can read it.
app.post(
  '/login',
  {
    schema: {
      body: {
        type: 'object',
        required: ['email'],
        properties: { email: { type: 'string', minLength: 1 } },
      },
    },
    config: {
      rateLimit: {
        limit: 5,
        window: '15m',
        algorithm: 'sliding-log',
        hook: 'preHandler',
        key: (request) => userKey(request.body.email.trim().toLowerCase()),
      },
    },
  },
  async (request, reply) => {
    // A real app checks the password here. Failed logins count toward the limit; to count only
    // failures, add `skipSuccessfulRequests: true` and answer a good login with 2xx.
    reply.code(401)
    return { error: 'wrong password', attemptsLeft: request.rateLimit?.remaining }
  },
)

// Search: a second limiter on top of the global one, 10 per second on average with bursts of
// up to 20 (token-bucket).
app.get(
  '/search',
  { preHandler: app.rateLimit({ limit: 10, window: '1s', algorithm: 'token-bucket', burst: 20 }) },
  async (request) => ({ results: [], q: request.query.q ?? '' }),
)

await app.listen({ port, host: process.env.HOST ?? '127.0.0.1' })
const where = redis === undefined ? 'MemoryStore (this process only)' : 'Redis (REDIS_URL)'
console.log(`example-fastify listening on http://localhost:${port} · counters in ${where}`)

async function shutdown() {
  await app.close()
  redis?.disconnect()
}
process.once('SIGINT', shutdown)
process.once('SIGTERM', shutdown)
