// RedisStore on a real local Redis Cluster (3 masters + 3 replicas), with each supported client
// library (ioredis, node-redis 4, 5, 6; one cluster each): every algorithm with keys on all three
// masters and no CROSSSLOT, then one master SIGKILLed: the limiter answers the dead master's keys
// per failureMode, by the deadline, keeps deciding the other masters' keys on Redis (one circuit
// per node), and decides on Redis again once the replica is promoted.
import { describe, expect, it } from 'vitest'
import {
  ALGORITHMS,
  createLimiter,
  encodeTag,
  failureOf,
  type LimiterError,
  RedisStore,
} from '../src/index.js'
import { clusterSlot } from '../src/stores/cluster-slot.js'
import { CLIENTS } from './setup/clients.js'
import {
  cli,
  keysOnEveryMaster,
  masters,
  slotOwners,
  useSyncedCluster,
} from './setup/cluster-nodes.js'
import { consumeRound, healthyFirst, watchFailover } from './setup/failover.js'

const TIMEOUT_MS = 200
const MARGIN_MS = 50

/** Every key matching `match` on the masters (seen from `viaPort`), per master. */
function keysPerMaster(viaPort: number, match: string): string[][] {
  return masters(viaPort).map((port) =>
    cli(port, '--scan', '--pattern', match)
      .split('\n')
      .filter((k) => k !== ''),
  )
}

describe.each(CLIENTS)('Redis Cluster on $name', (factory) => {
  const synced = useSyncedCluster(factory)

  it.each(ALGORITHMS)(
    '%s: keys on all three masters, batched per slot, no CROSSSLOT, exact limits',
    async (algorithm) => {
      const { cluster, client } = synced
      const errors: LimiterError[] = []
      const prefix = `spread-${algorithm}:`
      const limiter = createLimiter({
        algorithm,
        limit: 3,
        window: '1m',
        prefix,
        store: new RedisStore({ client }),
        failureMode: 'closed',
        blockedCache: false,
        onError: (error) => errors.push(error),
      })
      const keys = Array.from({ length: 60 }, (_, i) => `k${i}{${i % 7}}:${'é'.repeat(i)}`)
      // All at once: one event-loop turn, so the store batches them (one script call per slot).
      const decisions = await Promise.all(
        keys.flatMap((key) => Array.from({ length: 4 }, () => limiter.consume(key))),
      )
      expect(errors).toEqual([])
      expect(decisions.every((d) => failureOf(d) === undefined)).toBe(true)
      for (let i = 0; i < keys.length; i++) {
        const mine = decisions.slice(i * 4, i * 4 + 4).map((d) => d.allowed)
        expect(mine, keys[i]).toEqual([true, true, true, false])
      }
      // Each master holds some of the keys, and each holds only keys of the slots it serves.
      const perMaster = keysPerMaster(cluster.nodes[0]?.port as number, `${prefix}*`)
      expect(perMaster).toHaveLength(3)
      for (const found of perMaster) expect(found.length).toBeGreaterThan(0)
      const all = perMaster.flat()
      for (const key of keys) {
        const mine = all.filter((k) => k.startsWith(`${prefix}${limiter.name}:{${encodeTag(key)}}`))
        expect(mine.length, key).toBeGreaterThan(0)
      }
    },
  )

  it("one master SIGKILLed: its keys answered per failureMode by the deadline, the other masters' keys still decided by Redis; Redis decides again after the replica is promoted", async () => {
    const { cluster, client } = synced
    const live = cluster.nodes[0]?.port as number
    const owners = slotOwners(live)
    const keys = keysOnEveryMaster(owners, 4)
    const errors: Record<string, LimiterError[]> = { open: [], closed: [] }
    const limiters = (['open', 'closed'] as const).map((failureMode) => ({
      failureMode,
      limiter: createLimiter({
        limit: 1_000_000,
        window: '1m',
        name: `failover-${failureMode}`,
        store: new RedisStore({ client }),
        timeout: TIMEOUT_MS,
        failureMode,
        onError: (error) => errors[failureMode]?.push(error),
      }),
    }))
    const round = () => consumeRound(limiters, [...keys.keys()])
    // Healthy first: everything decided by Redis
    expect(await healthyFirst(round)).toBe(true)

    const victimPort = [...keys.values()][0] as number
    const victim = cluster.nodes.find((n) => n.port === victimPort)
    expect(victim).toBeDefined()
    const { shots, promotedMs, resumedMs, stallMs } = await watchFailover({
      round,
      kill: () => victim?.process.kill('SIGKILL'),
      promoted: () => {
        const survivor = cluster.nodes.find((n) => n.port !== victimPort) as { port: number }
        const now = masters(survivor.port)
        return now.length === 3 && !now.includes(victimPort)
      },
      maxMs: 25_000,
    })

    const failed = shots.filter((s) => failureOf(s.decision) !== undefined)
    // One circuit per node: the dead master's failures never send the other masters' keys to
    // failureMode (before, 544 of 822 failure answers here were for healthy masters' keys).
    const failedElsewhere = failed.filter((s) => keys.get(s.key) !== victimPort)
    const failedOnVictim = failed.length - failedElsewhere.length
    const worstMs = Math.max(...shots.map((s) => s.ms))
    console.log(
      [
        '',
        `Redis Cluster, one master SIGKILLed (cluster-node-timeout 1000 ms, default ${factory.name} cluster client)`,
        '| fault | decisions | answered by failureMode: keys on the dead master / on surviving masters | worst latency | lost | replica promoted after | Redis decides again after |',
        '|---|---|---|---|---|---|---|',
        `| SIGKILL master :${victimPort} | ${shots.length} | ${failedOnVictim} / ${failedElsewhere.length} | ${Math.round(worstMs)} ms | 0 | ${promotedMs === undefined ? 'never' : `${Math.round(promotedMs)} ms`} | ${resumedMs === undefined ? 'never' : `${Math.round(resumedMs)} ms (${Math.round(resumedMs - (promotedMs ?? 0))} ms after promotion)`} |`,
        `longest event-loop stall of the test process: ${Math.round(stallMs)} ms; errors reported: open ${errors.open?.length}, closed ${errors.closed?.length}`,
      ].join('\n'),
    )

    expect(promotedMs).toBeDefined()
    expect(resumedMs).toBeDefined()
    // Promotion to resumption: bounded (ioredis refreshes its slot map on MOVED or errors).
    expect((resumedMs as number) - (promotedMs as number)).toBeLessThanOrEqual(2000)
    expect(failedOnVictim).toBeGreaterThan(0)
    expect(failedElsewhere).toEqual([])
    // In 'closed' mode every surviving master's key got a real decision in every round.
    const healthyClosed = shots.filter(
      (s) => s.failureMode === 'closed' && keys.get(s.key) !== victimPort,
    )
    expect(healthyClosed.length).toBeGreaterThan(0)
    for (const shot of healthyClosed) expect(failureOf(shot.decision), shot.key).toBeUndefined()
    for (const shot of shots) {
      expect(shot.ms).toBeLessThanOrEqual(TIMEOUT_MS + MARGIN_MS + stallMs)
      const failure = failureOf(shot.decision)
      if (failure === undefined) expect(shot.decision.allowed).toBe(true)
      else if (shot.failureMode === 'open') expect(shot.decision.allowed).toBe(true)
      else expect(shot.decision).toMatchObject({ allowed: false, retryAfterMs: 1000 })
    }
    // The dead master's keys now live on its promoted replica.
    const after = slotOwners(live === victimPort ? (cluster.nodes[1]?.port as number) : live)
    for (const key of keys.keys()) {
      const port = after.get(clusterSlot(encodeTag(key)))
      expect(port).not.toBe(victimPort)
    }
    expect(errors.open?.length).toBeGreaterThan(0)
    expect(errors.closed?.length).toBeGreaterThan(0)
  }, 60_000)
})
