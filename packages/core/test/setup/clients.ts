// Every client library RedisStore supports, as factories the store tests run over
// (`describe.each(CLIENTS)`): ioredis, and node-redis 4, 5 and 6 (npm aliases redis4 and redis5, and redis itself for 6).
import { Cluster, Redis } from 'ioredis'
import * as redis6 from 'redis'
import * as redis4 from 'redis4'
import * as redis5 from 'redis5'
import { RedisStore, type RedisStoreClient } from '../../src/index.js'

/** A client connected to a test server, and how to drop it. */
export interface TestClient {
  readonly client: RedisStoreClient
  close(): Promise<void>
}

export interface ClientFactory {
  readonly name: string
  /**
   * A client on the standalone Redis at `port`, default settings (offline queue on), connected
   * (with `ready: false`: connecting in the background, as for a server that is not up yet).
   */
  standalone(port: number, options?: { ready?: boolean }): Promise<TestClient>
  /** A client on a Redis Cluster seeded by `ports`, ready. */
  cluster(ports: readonly number[]): Promise<TestClient>
}

interface NodeRedis {
  createClient(options: { url: string }): {
    connect(): Promise<unknown>
    disconnect(): Promise<void>
    on(event: 'error', fn: (e: unknown) => void): unknown
  }
  createCluster(options: { rootNodes: Array<{ url: string }> }): {
    connect(): Promise<unknown>
    disconnect(): Promise<void>
    on(event: 'error', fn: (e: unknown) => void): unknown
  }
}

function nodeRedis(
  name: string,
  lib: NodeRedis,
  extra: Record<string, unknown> = {},
): ClientFactory {
  return {
    name,
    async standalone(port, { ready = true } = {}) {
      const client = lib.createClient({ url: `redis://127.0.0.1:${port}`, ...extra })
      // No `error` listener of the test's own: the store's must be enough not to crash.
      const connected = client.connect()
      if (ready) await connected
      else connected.catch(() => {})
      return {
        client: client as unknown as RedisStoreClient,
        close: () => client.disconnect().catch(() => {}),
      }
    },
    async cluster(ports) {
      const client = lib.createCluster({
        rootNodes: ports.map((port) => ({ url: `redis://127.0.0.1:${port}` })),
        ...extra,
      })
      await client.connect()
      return {
        client: client as unknown as RedisStoreClient,
        close: () => client.disconnect().catch(() => {}),
      }
    },
  }
}

export const IOREDIS: ClientFactory = {
  name: 'ioredis',
  async standalone(port, { ready = true } = {}) {
    const client = new Redis(port, '127.0.0.1')
    if (ready) await client.ping()
    return { client, close: async () => client.disconnect() }
  },
  async cluster(ports) {
    const client = new Cluster(ports.map((port) => ({ host: '127.0.0.1', port })))
    await new Promise<void>((resolve, reject) => {
      client.once('ready', () => resolve())
      client.once('error', reject)
    })
    return { client, close: async () => client.disconnect() }
  },
}

export const NODE_REDIS: readonly ClientFactory[] = [
  nodeRedis('node-redis 4', redis4 as unknown as NodeRedis),
  nodeRedis('node-redis 5', redis5 as unknown as NodeRedis),
  nodeRedis('node-redis 6', redis6 as unknown as NodeRedis),
]

/** Every supported client library. */
export const CLIENTS: readonly ClientFactory[] = [IOREDIS, ...NODE_REDIS]

/**
 * Client settings that change what the store sees, for the store contract: RESP3 replies
 * (node-redis 5 and 6), and node-redis 4's callback-style legacyMode (standalone only).
 */
export const CLIENT_VARIANTS: readonly ClientFactory[] = [
  nodeRedis('node-redis 6 (RESP3)', redis6 as unknown as NodeRedis, { RESP: 3 }),
  nodeRedis('node-redis 4 (legacyMode)', redis4 as unknown as NodeRedis, { legacyMode: true }),
]

// Compile-time: the libraries' own client types are accepted as they are (no cast), in every major.
export function typedClients(): void {
  const check = (client: RedisStoreClient) => new RedisStore({ client })
  void [
    () => check(redis4.createClient()),
    () => check(redis4.createCluster({ rootNodes: [] })),
    () => check(redis5.createClient()),
    () => check(redis5.createCluster({ rootNodes: [] })),
    () => check(redis6.createClient()),
    () => check(redis6.createCluster({ rootNodes: [] })),
    () => check(redis6.createClient({ RESP: 3 })),
    () => check(new Redis()),
    () => check(new Cluster([])),
  ]
}

/** Runs `run` with a new client of `factory` on the standalone Redis at `port`, closed after. */
export async function withStandalone(
  factory: ClientFactory,
  port: number,
  run: (client: RedisStoreClient) => Promise<void>,
): Promise<void> {
  const { client, close } = await factory.standalone(port)
  try {
    await run(client)
  } finally {
    await close()
  }
}
