// A store built on a client that never connects says so at start-up (LIMITER_CLIENT_NOT_CONNECTED),
// not only at the first request that fails open; a client connecting, or connected later in the
// app's start-up, is left alone.
import { once } from 'node:events'
import { Cluster, Redis } from 'ioredis'
import * as redis6 from 'redis'
import * as redis4 from 'redis4'
import * as redis5 from 'redis5'
import { afterEach, describe, expect, it } from 'vitest'
import { captureWarnings, type Warning } from '../../../test-support/adapter-helpers.js'
import { freePort } from '../../../test-support/redis.js'
import { RedisStore, type RedisStoreClient } from '../src/index.js'
import { useRedis } from './setup/redis.js'

const redis = useRedis()
const CODE = 'LIMITER_CLIENT_NOT_CONNECTED'

interface NodeRedisLib {
  createClient(options?: { url?: string }): RedisStoreClient & {
    connect(): Promise<unknown>
    disconnect(): Promise<void>
    on(event: 'error', fn: (e: unknown) => void): unknown
  }
  createCluster(options: { rootNodes: Array<{ url: string }> }): RedisStoreClient
}
const LIBS: ReadonlyArray<[string, NodeRedisLib]> = [
  ['node-redis 4', redis4 as unknown as NodeRedisLib],
  ['node-redis 5', redis5 as unknown as NodeRedisLib],
  ['node-redis 6', redis6 as unknown as NodeRedisLib],
]

let capture: ReturnType<typeof captureWarnings> | undefined
const drops: Array<() => unknown> = []
afterEach(async () => {
  capture?.stop()
  capture = undefined
  for (const drop of drops.splice(0)) await drop()
})

const ours = (): Warning[] =>
  (capture?.warnings ?? []).filter((w) => (w as Warning).code === CODE) as Warning[]

// Waits for the warnings of `count` clients (the store waits its grace first).
async function warned(count: number): Promise<Warning[]> {
  for (let i = 0; i < 200 && ours().length < count; i++) await new Promise((r) => setTimeout(r, 50))
  return ours()
}

// Past the store's grace, for the clients that must not be warned about.
const pastGrace = () => new Promise((r) => setTimeout(r, 1500))

describe('a client never connected', () => {
  it.each(LIBS)('%s: createClient() without connect() is warned about, once', async (_, lib) => {
    capture = captureWarnings()
    const client = lib.createClient({ url: 'redis://127.0.0.1:6399' })
    new RedisStore({ client })
    new RedisStore({ client })
    const [warning] = await warned(1)
    expect(warning?.name).toBe('LimiterWarning')
    expect(warning?.message).toMatch(/not connected.*failing open.*await client\.connect\(\)/)
    expect(warning?.message).toContain('127.0.0.1:6399')
    await pastGrace()
    expect(ours()).toHaveLength(1)
  })

  it.each(LIBS)('%s: createCluster() without connect() is warned about', async (_, lib) => {
    capture = captureWarnings()
    const cluster = lib.createCluster({ rootNodes: [{ url: 'redis://127.0.0.1:7001' }] })
    new RedisStore({ client: cluster })
    const [warning] = await warned(1)
    expect(warning?.message).toMatch(/cluster.*not connected.*await client\.connect\(\)/i)
  })

  it('ioredis: a client already quit is warned about', async () => {
    capture = captureWarnings()
    const client = new Redis(redis.server.port, '127.0.0.1')
    await client.ping()
    await client.quit()
    await once(client, 'end')
    new RedisStore({ client })
    const [warning] = await warned(1)
    expect(warning?.message).toMatch(/not connected.*quit\(\)/)
  })

  // Regression (found from outside): a client quit or disconnected just before the store was
  // built still said `ready`, and no second look came
  it.each(['quit', 'disconnect'] as const)(
    'ioredis: a client %s() just before the store is built is warned about',
    async (how) => {
      capture = captureWarnings()
      const client = new Redis(redis.server.port, '127.0.0.1')
      await client.ping()
      void client[how]()
      new RedisStore({ client })
      const [warning] = await warned(1)
      expect(warning?.message).toMatch(/not connected.*quit\(\)/)
    },
  )
})

describe('a client connected, connecting, or connected during start-up', () => {
  it('is not warned about (node-redis 4, 5, 6, ioredis, ioredis lazyConnect and Cluster)', async () => {
    capture = captureWarnings()
    const { port } = redis.server
    const down = await freePort()
    for (const [, lib] of LIBS) {
      // connected before the store is built
      const ready = lib.createClient({ url: `redis://127.0.0.1:${port}` })
      await ready.connect()
      // connected just after the store is built, in the same start-up
      const later = lib.createClient({ url: `redis://127.0.0.1:${port}` })
      // connecting (isOpen, not isReady): its server is not up yet
      const connecting = lib.createClient({ url: `redis://127.0.0.1:${down}` })
      connecting.on('error', () => {})
      connecting.connect().catch(() => {})
      for (const client of [ready, later, connecting]) {
        new RedisStore({ client })
        drops.push(() => client.disconnect().catch(() => {}))
      }
      await new Promise((r) => setTimeout(r, 100))
      await later.connect()
    }
    // in use when the store is built, quit soon after: the app's business
    const quit = new Redis(port, '127.0.0.1')
    await quit.ping()
    new RedisStore({ client: quit })
    await quit.quit()
    const lazy = new Redis(port, '127.0.0.1', { lazyConnect: true })
    const cluster = new Cluster([{ host: '127.0.0.1', port: down }], { lazyConnect: true })
    for (const client of [lazy, cluster]) {
      new RedisStore({ client })
      drops.push(() => client.disconnect())
    }
    await pastGrace()
    expect(ours()).toEqual([])
  })
})
