// Store failures say where and why: the store's address, the client's last error, and what the
// limiter does about it, in the default warning and as fields for onError.
import { createServer } from 'node:net'
import { Cluster, Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { freePort, type RedisProcess, startRedis } from '../../../test-support/redis.js'
import { createLimiter, type LimiterError, RedisStore } from '../src/index.js'
import { clientAddress, errorCode } from '../src/stores/redis-client.js'

const clients: Array<{ disconnect(): void }> = []
afterEach(() => {
  for (const c of clients.splice(0)) c.disconnect()
  vi.restoreAllMocks()
})

async function failureFrom(client: Redis, failureMode: 'open' | 'closed' | 'local' = 'open') {
  clients.push(client)
  const seen: Array<{ error: LimiterError; failureMode: string }> = []
  const limiter = createLimiter({
    limit: 5,
    window: '1m',
    store: new RedisStore({ client }),
    failureMode,
    timeout: 300,
    onError: (error, context) => seen.push({ error, failureMode: context.failureMode }),
  })
  // The first call may race the first connection attempt; by the second the client has failed.
  for (let i = 0; i < 20 && seen.length === 0; i++) {
    await limiter.consume('alice')
    await new Promise((r) => setTimeout(r, 50))
  }
  for (let i = 0; i < 20 && seen.at(-1)?.error.clientError === undefined; i++) {
    await new Promise((r) => setTimeout(r, 50))
    await limiter.consume('alice')
  }
  return { seen, limiter }
}

describe('a refused connection', () => {
  it('names host:port and ECONNREFUSED, for onError as fields', async () => {
    const port = await freePort()
    const { seen } = await failureFrom(new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 0 }))
    const last = seen.at(-1)
    expect(last?.error.code).toBe('ERR_LIMITER_STORE')
    expect(last?.error.address).toBe(`127.0.0.1:${port}`)
    expect(last?.error.clientError).toBe('ECONNREFUSED')
    expect(last?.error.message).toContain(`Redis at 127.0.0.1:${port}`)
    expect(last?.error.message).toContain('ECONNREFUSED')
    expect(last?.failureMode).toBe('open')
  })

  // Regression (found from outside): a failed reset said only the client's error, no address
  it('a failed reset names host:port too', async () => {
    const port = await freePort()
    const { seen, limiter } = await failureFrom(
      new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 0 }),
    )
    const before = seen.length
    await limiter.reset('alice')
    const reset = seen.slice(before).at(-1)
    expect(reset?.error.address).toBe(`127.0.0.1:${port}`)
    expect(reset?.error.message).toContain(`Redis at 127.0.0.1:${port}`)
  })

  it.each([
    ['open', 'failing open'],
    ['closed', 'failing closed'],
    ['local', 'deciding locally'],
  ] as const)(
    "the default warning says where, why and what failureMode '%s' does",
    async (mode, doing) => {
      const port = await freePort()
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
      const client = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 0 })
      clients.push(client)
      const limiter = createLimiter({
        limit: 5,
        window: '1m',
        store: new RedisStore({ client }),
        failureMode: mode,
      })
      // Let the client fail its first connection, so the warning has the error code.
      await new Promise((resolve) => client.once('error', resolve))
      await limiter.consume('alice')
      expect(warn).toHaveBeenCalledTimes(1)
      const line = String(warn.mock.calls[0]?.[0])
      expect(line).toContain(`127.0.0.1:${port}`)
      expect(line).toContain('ECONNREFUSED')
      expect(line).toContain(doing)
    },
  )
})

describe('a client trying again after a failure', () => {
  // The second attempt reaches a server that accepts and never answers: ioredis waits in
  // `connect` for its ready check, and would hold a call in its offline queue meanwhile.
  it('fails calls at once, naming the last error, instead of queueing them to the deadline', async () => {
    const port = await freePort()
    const client = new Redis(port, '127.0.0.1', { retryStrategy: () => 20 })
    clients.push(client)
    const seen: LimiterError[] = []
    const limiter = createLimiter({
      limit: 5,
      window: '1m',
      store: new RedisStore({ client }),
      timeout: 60_000,
      onError: (error) => seen.push(error),
    })
    await new Promise((resolve) => client.once('error', resolve))
    const silent = createServer(() => {})
    await new Promise<void>((resolve) => silent.listen(port, '127.0.0.1', resolve))
    try {
      await new Promise((resolve) => client.once('connect', resolve))
      expect(client.status).toBe('connect')
      const decision = await limiter.consume('alice')
      expect(decision.allowed).toBe(true)
      expect(seen).toHaveLength(1)
      expect(seen[0]?.message).toContain('is unreachable (client reconnecting)')
      expect(seen[0]?.clientError).toBe('ECONNREFUSED')
    } finally {
      client.disconnect()
      silent.close()
    }
  })
})

describe('a refused password', () => {
  let server: RedisProcess
  beforeAll(async () => {
    server = await startRedis()
    const admin = new Redis(server.port, '127.0.0.1')
    await admin.config('SET', 'requirepass', 'sesame')
    admin.disconnect()
  })
  afterAll(() => server.stop())

  it('names NOAUTH', async () => {
    const client = new Redis(server.port, '127.0.0.1', { maxRetriesPerRequest: 0 })
    const { seen } = await failureFrom(client)
    const last = seen.at(-1)
    expect(last?.error.address).toBe(`127.0.0.1:${server.port}`)
    expect(last?.error.clientError).toBe('NOAUTH')
    expect(last?.error.message).toContain('NOAUTH')
  })
})

describe('clientAddress', () => {
  it('names a Cluster by its seed nodes and a Sentinel group by its master name', () => {
    const cluster = new Cluster([{ host: '10.0.0.1', port: 7000 }, '10.0.0.2:7001'], {
      lazyConnect: true,
    })
    expect(clientAddress(cluster)).toBe('the cluster seeded by 10.0.0.1:7000, 10.0.0.2:7001')
    const sentinel = new Redis({
      sentinels: [{ host: '10.0.0.3', port: 26379 }],
      name: 'mymaster',
      lazyConnect: true,
    })
    expect(clientAddress(sentinel)).toBe('Sentinel master "mymaster"')
    const socket = new Redis({ path: '/run/redis.sock', lazyConnect: true })
    expect(clientAddress(socket)).toBe('/run/redis.sock')
    cluster.disconnect()
    sentinel.disconnect()
    socket.disconnect()
  })

  it('reads a code from an error: its code, or a reply word', () => {
    expect(errorCode(Object.assign(new Error('x'), { code: 'ETIMEDOUT' }))).toBe('ETIMEDOUT')
    expect(errorCode(new Error('NOAUTH Authentication required.'))).toBe('NOAUTH')
    expect(errorCode(new Error('connection lost'))).toBeUndefined()
  })
})
