// One worker: an Express app with a global limit kept in Redis. run.mjs starts several of these
// with the same settings; the limiter definition is the same in each, so they share one counter.
import { rateLimit } from '@limiter/express'
import express from 'express'
import { Redis } from 'ioredis'

const redis = new Redis(process.env.REDIS_URL)
const app = express()

app.use(
  rateLimit({
    limit: Number(process.env.LIMIT ?? 50),
    window: '1m',
    algorithm: 'sliding-log', // exact: never more than `limit` in any minute
    prefix: process.env.PREFIX ?? 'rl:',
    redis,
    onError: (error) => console.error(`worker ${process.pid}: store error: ${error.message}`),
  }),
)
app.get('/', (_req, res) => {
  res.send(`ok from ${process.pid}\n`)
})

const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  // Tell run.mjs (our parent, over IPC) where we listen; standalone, print it.
  const { port } = server.address()
  if (process.send) process.send({ port })
  else console.log(`worker ${process.pid} listening on http://127.0.0.1:${port}`)
})

function shutdown() {
  server.close()
  server.closeAllConnections()
  redis.disconnect()
  if (process.connected) process.disconnect()
}
process.once('SIGTERM', shutdown)
process.once('SIGINT', shutdown)
// If run.mjs goes away, so do we.
process.once('disconnect', shutdown)
