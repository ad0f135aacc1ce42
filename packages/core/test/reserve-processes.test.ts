// The fleet reserve across 4 real processes sharing one Redis (and a Cluster): low requests never
// hold more than their ceiling, whatever the other processes do; critical ones are never refused
// by the reserve; every lease comes back.
import { describe, expect, it } from 'vitest'
import { clusterEnv, requireBuilt, runFixture, topologies } from './setup/processes.js'
import { scanKeys, useCluster, useRedis } from './setup/redis.js'

const redis = useRedis()
const cluster = useCluster(3, 0)

requireBuilt()

interface Tally {
  admitted: number
  reserve: number
  other: number
  peak: number
}

async function child(ports: string, args: readonly string[], clustered: boolean): Promise<Tally> {
  const stdout = await runFixture('reserver.mjs', [ports, ...args], { env: clusterEnv(clustered) })
  return JSON.parse(stdout) as Tally
}

describe.each(topologies(redis, cluster))('on %s', (_name, ports, client, clustered) => {
  it('2 low and 2 critical processes, limit 8, reserve { critical: 0.5 }: low holds at most 4', async () => {
    const key = `fleet-${Date.now()}`
    const start = (classes: readonly string[]) =>
      Promise.all(classes.map((p) => child(ports(), [key, p, '150', '8'], clustered)))
    // low alone: 16 workers in 2 processes against a ceiling of 4 (the reserve keeps the rest)
    const [aloneA, aloneB] = (await start(['low', 'low'])) as [Tally, Tally]
    const alonePeak = Math.max(aloneA.peak, aloneB.peak)
    expect(alonePeak).toBeGreaterThanOrEqual(1)
    expect(alonePeak).toBeLessThanOrEqual(4)
    expect(aloneA.reserve + aloneB.reserve).toBeGreaterThan(0)
    // then both classes at once (however the machine schedules them: critical may fill every
    // slot and keep low out, but low never holds more than its ceiling)
    const [lowA, lowB, critA, critB] = (await start(['low', 'low', 'critical', 'critical'])) as [
      Tally,
      Tally,
      Tally,
      Tally,
    ]
    // one counter per class, shared by its two processes: both saw the class's peak
    expect(Math.max(lowA.peak, lowB.peak)).toBeLessThanOrEqual(4)
    expect(Math.max(critA.peak, critB.peak)).toBeLessThanOrEqual(8)
    // critical is never kept out by the reserve
    expect(critA.reserve + critB.reserve).toBe(0)
    expect(critA.admitted + critB.admitted).toBeGreaterThan(0)
    // every lease was released: nothing remains
    expect(await scanKeys(client(), 'rl:reserved:*')).toEqual([])
    await client().del(`probe:{${key}}:low`, `probe:{${key}}:critical`)
  }, 90_000)
})
