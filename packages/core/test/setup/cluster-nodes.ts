// Test setup: a local Redis Cluster of 3 masters and 3 synced replicas for failover tests, and
// what its nodes say (slot owners, live masters) through redis-cli.
import { execFileSync } from 'node:child_process'
import { afterAll, beforeAll } from 'vitest'
import { type RedisCluster, startCluster } from '../../../../test-support/redis.js'
import { encodeTag, type RedisStoreClient } from '../../src/index.js'
import { clusterSlot } from '../../src/stores/cluster-slot.js'
import type { ClientFactory, TestClient } from './clients.js'

/** 3 masters + 3 replicas, every replica in sync, healthy masters served during a failover. */
export async function startSyncedCluster(): Promise<RedisCluster> {
  const cluster = await startCluster(3, 1)
  // A replica that never synced is too stale to be promoted. Masters hold a diskless sync back
  // 5 s by default, waiting for more replicas: start it now, and wait until every replica is in sync.
  for (const node of cluster.nodes) cli(node.port, 'CONFIG', 'SET', 'repl-diskless-sync-delay', '0')
  // By default (`cluster-require-full-coverage yes`) every node answers CLUSTERDOWN from the
  // moment a master is marked failed until its replica is promoted: no client can serve the
  // healthy masters' keys then. Without it, they keep serving, and so must the limiter.
  for (const node of cluster.nodes)
    cli(node.port, 'CONFIG', 'SET', 'cluster-require-full-coverage', 'no')
  const deadline = Date.now() + 20_000
  for (const node of cluster.nodes) {
    for (;;) {
      const info = cli(node.port, 'INFO', 'replication')
      if (info.includes('role:master') || info.includes('master_link_status:up')) break
      if (Date.now() > deadline) throw new Error('cluster replicas did not sync within 20 s')
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  return cluster
}

/** redis-cli against the node at `port`. */
export function cli(port: number, ...args: string[]): string {
  return execFileSync('redis-cli', ['-p', String(port), ...args], {
    encoding: 'utf8',
    timeout: 5000,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

/** Which port serves each slot, as a live node sees it now (CLUSTER SLOTS). */
export function slotOwners(viaPort: number): Map<number, number> {
  const out = cli(viaPort, '--json', 'CLUSTER', 'SLOTS')
  const ranges = JSON.parse(out) as Array<[number, number, [string, number, string]]>
  const owners = new Map<number, number>()
  for (const [from, to, [, port]] of ranges) for (let s = from; s <= to; s++) owners.set(s, port)
  return owners
}

/** The master ports, from CLUSTER NODES on a live node. */
export function masters(viaPort: number): number[] {
  const out = cli(viaPort, 'CLUSTER', 'NODES')
  return out
    .split('\n')
    .filter((line) => /\bmaster\b/.test(line) && !/\bfail\b/.test(line))
    .map((line) => Number(line.split(' ')[1]?.split(':')[1]?.split('@')[0]))
}

/** Keys whose hash tags land on slots served by every master (a few per master). */
export function keysOnEveryMaster(
  owners: Map<number, number>,
  perMaster: number,
  prefix = 'user:',
): Map<string, number> {
  const keys = new Map<string, number>()
  const count = new Map<number, number>()
  for (let i = 0; keys.size < perMaster * 3; i++) {
    const key = `${prefix}${i}`
    const port = owners.get(clusterSlot(encodeTag(key))) as number
    if ((count.get(port) ?? 0) >= perMaster) continue
    count.set(port, (count.get(port) ?? 0) + 1)
    keys.set(key, port)
  }
  return keys
}

/** What {@link useSyncedCluster} gives a describe block's tests, once its `beforeAll` has run. */
export interface SyncedCluster {
  readonly cluster: RedisCluster
  readonly client: RedisStoreClient
}

/**
 * A synced Cluster ({@link startSyncedCluster}) and a `factory` client on it at its default
 * settings, for the calling describe block: started before its tests, closed and stopped after
 * (stopping resumes a frozen node first).
 */
export function useSyncedCluster(factory: ClientFactory): SyncedCluster {
  let cluster: RedisCluster | undefined
  let opened: TestClient | undefined
  beforeAll(async () => {
    cluster = await startSyncedCluster()
    opened = await factory.cluster(cluster.startupNodes.slice(0, 3).map((n) => n.port))
  }, 120_000)
  afterAll(async () => {
    await opened?.close()
    await cluster?.stop()
  })
  return {
    get cluster() {
      return cluster as RedisCluster
    },
    get client() {
      return (opened as TestClient).client
    },
  }
}
