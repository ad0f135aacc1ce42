// node-redis writes the commands of one event-loop iteration together, so RedisStore sends
// the first script call of a turn at once and holds the others for the next iteration (its
// waves): Redis starts on the first while the process makes the rest. These tests hold the
// rules that makes safe: order is kept (standalone and Cluster), and a held call whose server
// went down fails instead of waiting in node-redis's offline queue.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createLimiter, failureOf, RedisStore, type RedisStoreClient } from '../src/index.js'
import { keySlot } from '../src/stores/cluster-slot.js'
import { NODE_REDIS, withStandalone } from './setup/clients.js'
import { useCluster, useRedis } from './setup/redis.js'

const redis = useRedis()
const cluster = useCluster(3)
const nextIteration = () => new Promise<void>((resolve) => setImmediate(resolve))

type NodeRedisClient = RedisStoreClient & {
  sendCommand(args: string[]): Promise<unknown>
  readonly isReady: boolean
}

/**
 * `client` seen through a window that counts the script calls it is given and, on `outage()`,
 * reports it reconnecting after a connection error (as node-redis does when its server goes).
 */
function watched(client: NodeRedisClient) {
  const scripts: string[] = []
  const errorListeners: Array<(error: Error) => void> = []
  let down = false
  const proxy = new Proxy(client, {
    get(target, prop) {
      if (prop === 'sendCommand')
        return (args: string[]) => {
          if (args[0] === 'EVALSHA' || args[0] === 'EVAL') scripts.push(args[0])
          return target.sendCommand(args)
        }
      if (prop === 'isReady') return down ? false : target.isReady
      if (prop === 'on')
        return (event: string, listener: (error: Error) => void) => {
          if (event === 'error') errorListeners.push(listener)
          return proxy
        }
      const value: unknown = Reflect.get(target, prop, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  return {
    client: proxy as RedisStoreClient,
    scripts,
    outage() {
      down = true
      const error = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), {
        code: 'ECONNREFUSED',
      })
      for (const listener of errorListeners) listener(error)
    },
  }
}

/** A limiter that admits all these tests ask (1000 a minute), quiet about store failures. */
const roomy = (client: RedisStoreClient, prefix: string) =>
  createLimiter({
    algorithm: 'gcra',
    limit: 1000,
    window: '1m',
    prefix,
    store: new RedisStore({ client }),
    onError: () => {},
  })

/** A fixed window of `limit` a minute whose every answer comes from Redis (no blocked-key cache). */
const counting = (client: RedisStoreClient, limit: number, prefix: string) =>
  createLimiter({
    algorithm: 'fixed-window',
    limit,
    window: '1m',
    prefix,
    store: new RedisStore({ client }),
    blockedCache: false,
  })

describe.each(NODE_REDIS)('RedisStore on $name, in waves', (factory) => {
  it('sends the first script call of a turn at once and the others with the next iteration', async () => {
    await withStandalone(factory, redis.server.port, async (client) => {
      const seen = watched(client as NodeRedisClient)
      const limiter = roomy(seen.client, `waves-${factory.name}:`)
      const pending = Array.from({ length: 70 }, (_, i) => limiter.consume(`k${i}`))
      // Two batches of 32 filled up in this turn: the first has gone, the second waits.
      expect(seen.scripts).toHaveLength(1)
      await nextIteration()
      // The second, and the last 6 (sent at the end of the turn), went together.
      expect(seen.scripts).toHaveLength(3)
      const decisions = await Promise.all(pending)
      expect(decisions.every((d) => d.allowed && d.remaining === 999)).toBe(true)
    })
  })

  it('keeps the order of a turn: three full batches in call order, then the reset', async () => {
    await withStandalone(factory, redis.server.port, async (client) => {
      const limiter = counting(client, 50, `waves-order-${factory.name}:`)
      await limiter.consume('warm') // the script is cached: no NOSCRIPT retry reorders calls
      // 3 x 32: the first batch goes at once; the second (which admits 18 more), the third and
      // the reset wait for the next iteration, and go in that order.
      const pending = Array.from({ length: 96 }, () => limiter.consume('k'))
      const reset = limiter.reset('k')
      const decisions = await Promise.all(pending)
      await reset
      expect(decisions.map((d) => d.allowed)).toEqual(Array.from({ length: 96 }, (_, i) => i < 50))
      expect(decisions.slice(0, 50).map((d) => d.remaining)).toEqual(
        Array.from({ length: 50 }, (_, i) => 49 - i),
      )
      // The reset went last: nothing is counted.
      expect((await limiter.peek('k')).remaining).toBe(50)
    })
  })

  it('fails a held call whose server went down instead of queueing it offline', async () => {
    await withStandalone(factory, redis.server.port, async (client) => {
      const seen = watched(client as NodeRedisClient)
      const limiter = roomy(seen.client, `waves-down-${factory.name}:`)
      const pending = Array.from({ length: 64 }, (_, i) => limiter.consume(`k${i}`))
      expect(seen.scripts).toHaveLength(1)
      seen.outage()
      const decisions = await Promise.all(pending)
      // The first batch was on its way and is decided; the held one never reached the client.
      expect(seen.scripts).toHaveLength(1)
      expect(decisions.slice(0, 32).every((d) => failureOf(d) === undefined)).toBe(true)
      const failures = decisions.slice(32).map((d) => failureOf(d))
      expect(failures.every((f) => f?.code === 'ERR_LIMITER_STORE')).toBe(true)
      expect(String(failures[0]?.message)).toMatch(/client reconnecting/)
    })
  })

  it('on a Cluster, keeps the order of a turn on every master', async () => {
    const { client, close } = await factory.cluster(cluster.cluster.startupNodes.map((n) => n.port))
    try {
      const limiter = counting(client, 5, `waves-cluster-${factory.name}:`)
      // Keys on all three masters (of 12, some land on each), 70 decisions each in one turn:
      // per key two full batches and a partial one, in up to three waves per master.
      const keys = Array.from({ length: 12 }, (_, i) => `user${i}`)
      const pending = keys.map((key) =>
        Promise.all(Array.from({ length: 70 }, () => limiter.consume(key))),
      )
      const decided = await Promise.all(pending)
      for (const decisions of decided) {
        expect(decisions.map((d) => d.allowed)).toEqual(Array.from({ length: 70 }, (_, i) => i < 5))
        expect(decisions.slice(0, 5).map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0])
      }
    } finally {
      await close()
    }
  })
})

describe('keySlot (a held call waits with the master of its first key)', () => {
  it("is Redis's CLUSTER KEYSLOT for any key, braces anywhere", async () => {
    const piece = fc.constantFrom('{', '}', '{}', 'a', 'user:42', 'é', '%7B', '')
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(piece, fc.string()), { maxLength: 6 }), async (parts) => {
        const key = parts.join('')
        const node = cluster.client.nodes('master')[0]
        expect(keySlot(key)).toBe(await node?.cluster('KEYSLOT', key))
      }),
      { numRuns: 200 },
    )
  })
})
