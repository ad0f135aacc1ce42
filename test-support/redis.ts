// Test support: private redis-server processes on free ports of 127.0.0.1: standalone (from
// redis-server.mjs, shared with the benchmarks), Cluster and Sentinel. Tests never touch the shared
// Redis on 6379.
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  freePort,
  type RedisProcess,
  redisProcess,
  requireBinary,
  startRedis,
  waitForPing,
} from './redis-server.mjs'

export { freePort, type RedisProcess, startRedis } from './redis-server.mjs'

/** A local Redis Cluster this test started. */
export interface RedisCluster {
  readonly nodes: readonly RedisProcess[]
  /** `{ host, port }` of every node, for `new Cluster(...)`. */
  readonly startupNodes: ReadonlyArray<{ host: string; port: number }>
  stop(): Promise<void>
}

/** Starts `masters` masters with `replicasPerMaster` replicas each and joins them into a cluster. */
export async function startCluster(masters = 3, replicasPerMaster = 1): Promise<RedisCluster> {
  requireBinary('redis-cli')
  const count = masters * (1 + replicasPerMaster)
  const nodes: RedisProcess[] = []
  for (let i = 0; i < count; i++) {
    nodes.push(
      await startRedis([
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        'nodes.conf',
        '--cluster-node-timeout',
        '1000',
      ]),
    )
  }
  execFileSync(
    'redis-cli',
    [
      '--cluster',
      'create',
      ...nodes.map((n) => `127.0.0.1:${n.port}`),
      '--cluster-replicas',
      String(replicasPerMaster),
      '--cluster-yes',
    ],
    { stdio: 'ignore', timeout: 30_000 },
  )
  // Wait until every node reports the cluster as ok.
  const deadline = Date.now() + 20_000
  for (const node of nodes) {
    for (;;) {
      const info = execFileSync('redis-cli', ['-p', String(node.port), 'CLUSTER', 'INFO'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      if (info.includes('cluster_state:ok')) break
      if (Date.now() > deadline)
        throw new Error('local Redis Cluster did not reach cluster_state:ok within 20 s')
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  return {
    nodes,
    startupNodes: nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
    stop: async () => {
      await Promise.all(nodes.map((n) => n.stop()))
    },
  }
}

function cli(port: number, ...args: string[]): string {
  return execFileSync('redis-cli', ['-p', String(port), ...args], {
    encoding: 'utf8',
    timeout: 5000,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

/** A master, its replica and one sentinel watching them, all started by the test. */
export interface RedisSentinel {
  /** The master group name the sentinel monitors (`'mymaster'`). */
  readonly name: string
  readonly master: RedisProcess
  readonly replica: RedisProcess
  readonly sentinel: RedisProcess
  /** `[{ host, port }]` of the sentinel, for `new Redis({ sentinels, name })`. */
  readonly sentinels: ReadonlyArray<{ host: string; port: number }>
  stop(): Promise<void>
}

/**
 * Starts a master, a replica of it and a sentinel (`redis-server <conf> --sentinel`, quorum 1)
 * that fails over `downAfterMs` after the master stops answering. Resolves once the sentinel
 * knows the replica, so a failover can promote it.
 */
export async function startSentinel(
  options: { name?: string; downAfterMs?: number; failoverTimeoutMs?: number } = {},
): Promise<RedisSentinel> {
  requireBinary('redis-cli')
  const { name = 'mymaster', downAfterMs = 1000, failoverTimeoutMs = 5000 } = options
  // No diskless-sync delay (5 s by default): the replica syncs at once, so it can be promoted.
  const master = await startRedis(['--repl-diskless-sync-delay', '0'])
  const replica = await startRedis([
    '--replicaof',
    '127.0.0.1',
    String(master.port),
    '--repl-diskless-sync-delay',
    '0',
  ])
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'limiter-sentinel-'))
  // The sentinel rewrites its config file as it learns the topology: it must be writable.
  const config = join(dir, 'sentinel.conf')
  writeFileSync(
    config,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${name} 127.0.0.1 ${master.port} 1`,
      `sentinel down-after-milliseconds ${name} ${downAfterMs}`,
      `sentinel failover-timeout ${name} ${failoverTimeoutMs}`,
      `sentinel parallel-syncs ${name} 1`,
      '',
    ].join('\n'),
  )
  const child = spawn('redis-server', [config, '--sentinel'], { stdio: 'ignore' })
  child.unref()
  const sentinel = redisProcess(port, child, dir)
  const stop = async (): Promise<void> => {
    await Promise.all([sentinel.stop(), master.stop(), replica.stop()])
  }
  try {
    await waitForPing(port, 10_000, child)
    const deadline = Date.now() + 20_000
    for (;;) {
      const synced = cli(replica.port, 'INFO', 'replication').includes('master_link_status:up')
      const known = cli(port, 'SENTINEL', 'REPLICAS', name).includes(String(replica.port))
      if (synced && known) break
      if (Date.now() > deadline)
        throw new Error('sentinel setup: the replica did not sync or was not found within 20 s')
      await new Promise((r) => setTimeout(r, 100))
    }
  } catch (error) {
    await stop()
    throw error
  }
  return {
    name,
    master,
    replica,
    sentinel,
    sentinels: [{ host: '127.0.0.1', port }],
    stop,
  }
}
