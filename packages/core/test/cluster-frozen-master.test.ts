// A Redis Cluster master that hangs (SIGSTOP) instead of dying: its connection stays up, so no
// client (ioredis, node-redis 4, 5, 6) notices anything but unanswered calls, and none looked for
// the promoted replica: that master's keys stayed on failureMode for as long as it was frozen
// (45-60 s watched), where a SIGKILLed master's came back to Redis within 2-3 s. The store now
// watches each master's calls and, while one stays silent, has the client look for the slot's
// new owner: the frozen master's keys are decided by Redis again soon after the promotion.
import { execFileSync } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RedisCluster, startCluster } from '../../../test-support/redis.js'
import {
  createLimiter,
  encodeTag,
  failureOf,
  type LimiterError,
  RedisStore,
  type RedisStoreClient,
} from '../src/index.js'
import { clusterSlot } from '../src/stores/cluster-slot.js'
import { CLIENTS, type TestClient } from './setup/clients.js'
import { consumeRound, watchFailover } from './setup/failover.js'

const TIMEOUT_MS = 200
// Generous: on an idle machine the keys came back 1-2 s after the promotion. A bound, not a
// speed assertion: before the fix they never came back while the master stayed frozen.
const BACK_WITHIN_MS = 20_000

function cli(port: number, ...args: string[]): string {
  return execFileSync('redis-cli', ['-p', String(port), ...args], {
    encoding: 'utf8',
    timeout: 5000,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

// 3 masters + 3 replicas, every replica in sync (a stale one is not promoted), serving the
// healthy masters' keys while one master is marked failed (no full coverage required).
async function startSyncedCluster(): Promise<RedisCluster> {
  const cluster = await startCluster(3, 1)
  for (const node of cluster.nodes) {
    cli(node.port, 'CONFIG', 'SET', 'repl-diskless-sync-delay', '0')
    cli(node.port, 'CONFIG', 'SET', 'cluster-require-full-coverage', 'no')
  }
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

/** Which port serves each slot, as the node at `viaPort` sees it now. */
function slotOwners(viaPort: number): Map<number, number> {
  const ranges = JSON.parse(cli(viaPort, '--json', 'CLUSTER', 'SLOTS')) as Array<
    [number, number, [string, number, string]]
  >
  const owners = new Map<number, number>()
  for (const [from, to, [, port]] of ranges) for (let s = from; s <= to; s++) owners.set(s, port)
  return owners
}

/** The ports of the masters not marked failed, as the node at `viaPort` sees them now. */
function liveMasters(viaPort: number): number[] {
  return cli(viaPort, 'CLUSTER', 'NODES')
    .split('\n')
    .filter((line) => /\bmaster\b/.test(line) && !/\bfail\b/.test(line))
    .map((line) => Number(line.split(' ')[1]?.split(':')[1]?.split('@')[0]))
}

/** `perMaster` keys on each master: key -> the port serving its slot. */
function keysOnEveryMaster(owners: Map<number, number>, perMaster: number): Map<string, number> {
  const keys = new Map<string, number>()
  const count = new Map<number, number>()
  for (let i = 0; keys.size < perMaster * 3; i++) {
    const key = `frozen:${i}`
    const port = owners.get(clusterSlot(encodeTag(key))) as number
    if ((count.get(port) ?? 0) >= perMaster) continue
    count.set(port, (count.get(port) ?? 0) + 1)
    keys.set(key, port)
  }
  return keys
}

describe.each(CLIENTS)('Redis Cluster on $name, a master frozen', (factory) => {
  let cluster: RedisCluster
  let opened: TestClient
  let client: RedisStoreClient
  beforeAll(async () => {
    cluster = await startSyncedCluster()
    opened = await factory.cluster(cluster.startupNodes.slice(0, 3).map((n) => n.port))
    client = opened.client
  }, 120_000)

  afterAll(async () => {
    await opened?.close()
    await cluster?.stop() // resumes (SIGCONT) a frozen node before stopping it
  })

  it("a master SIGSTOPped: its keys go back to Redis after its replica is promoted; the others' never leave it", async () => {
    const live = cluster.nodes[0]?.port as number
    const keys = keysOnEveryMaster(slotOwners(live), 3)
    const errors: LimiterError[] = []
    const limiter = createLimiter({
      limit: 1_000_000,
      window: '1m',
      name: 'frozen',
      store: new RedisStore({ client }),
      timeout: TIMEOUT_MS,
      failureMode: 'open',
      onError: (error) => errors.push(error),
    })
    const round = () => consumeRound([{ failureMode: 'open', limiter }], [...keys.keys()])
    // Healthy first (a fresh client's first round may miss the deadline on a loaded machine).
    let healthyFirst = false
    for (let i = 0; i < 10 && !healthyFirst; i++)
      healthyFirst = (await round()).every((shot) => failureOf(shot.decision) === undefined)
    expect(healthyFirst).toBe(true)

    const victimPort = [...keys.values()][0] as number
    const victim = cluster.nodes.find((n) => n.port === victimPort)
    const survivor = cluster.nodes.find((n) => n.port !== victimPort) as { port: number }
    try {
      const { shots, promotedMs, resumedMs } = await watchFailover({
        round,
        kill: () => victim?.process.kill('SIGSTOP'),
        promoted: () => {
          const now = liveMasters(survivor.port)
          return now.length === 3 && !now.includes(victimPort)
        },
        maxMs: 5000 + BACK_WITHIN_MS,
      })
      const failed = shots.filter((s) => failureOf(s.decision) !== undefined)
      const failedOnVictim = failed.filter((s) => keys.get(s.key) === victimPort)
      console.log(
        `${factory.name}, master :${victimPort} SIGSTOPped: ${shots.length} decisions, ${failedOnVictim.length} of its keys' and ${failed.length - failedOnVictim.length} of the others' answered by failureMode; replica promoted after ${promotedMs === undefined ? 'never' : `${Math.round(promotedMs)} ms`}, Redis decides again after ${resumedMs === undefined ? 'never' : `${Math.round(resumedMs)} ms`}`,
      )
      // The freeze was felt, on the frozen master's keys only (one circuit per master).
      expect(failedOnVictim.length).toBeGreaterThan(0)
      expect(failed.length - failedOnVictim.length).toBe(0)
      expect(promotedMs).toBeDefined()
      // Redis decides every key again (5 rounds in a row), the frozen master's included.
      expect(resumedMs).toBeDefined()
      expect((resumedMs as number) - (promotedMs as number)).toBeLessThanOrEqual(BACK_WITHIN_MS)
      const after = slotOwners(survivor.port)
      for (const key of keys.keys())
        expect(after.get(clusterSlot(encodeTag(key))), key).not.toBe(victimPort)
      expect(errors.length).toBeGreaterThan(0)
    } finally {
      victim?.process.kill('SIGKILL')
    }
  }, 90_000)
})
