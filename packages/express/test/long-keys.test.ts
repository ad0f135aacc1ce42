// A client cannot make a key big: a key read from the request body (here 150 distinct 200 kB
// user names) is held by the default MemoryStore as its digest, not whole (was 30 MB of heap).
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import request from 'supertest'
import { describe, expect, it } from 'vitest'
import { rateLimit } from '../src/index.js'
import { EXPRESS } from './helpers.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void
const heapMb = (): number => {
  gc()
  gc()
  return process.memoryUsage().heapUsed / 2 ** 20
}

describe.each(EXPRESS)('$version: long keys from the body', ({ express }) => {
  it('150 distinct 200 kB keys leave no trace on the heap; two of them keep separate counters', async () => {
    const app = express()
    app.use(express.json({ limit: '1mb' }))
    app.post(
      '/login',
      rateLimit({ limit: 1, window: '1h', key: (req) => String(req.body.user) }),
      (_req, res) => {
        res.send('ok')
      },
    )
    const user = (i: number) => `${i}:${'u'.repeat(200 * 1024)}`
    const send = (name: string) => request(app).post('/login').send({ user: name })
    await send(user(-1))
    const before = heapMb()
    for (let i = 0; i < 150; i++) expect((await send(user(i))).status).toBe(200)
    expect(heapMb() - before).toBeLessThan(5)
    // Each long key still has its own counter, and the same long key shares one.
    expect((await send(user(7))).status).toBe(429)
    expect((await send(`${user(7)}x`)).status).toBe(200)
  })
})
