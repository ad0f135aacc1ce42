// RedisStore through an ioredis Sentinel client: a master, a replica and a sentinel started here.
// The master is SIGKILLed: the limiter keeps answering per failureMode by the deadline, and
// decides on Redis again, on the promoted replica, with no restart.
import { execFileSync } from 'node:child_process'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RedisSentinel, startSentinel } from '../../../test-support/redis.js'
import { createLimiter, failureOf, type LimiterError, RedisStore, redisKeys } from '../src/index.js'
import { storeNamespace } from '../src/policies/naming.js'
import { consumeRound, watchFailover } from './setup/failover.js'

const TIMEOUT_MS = 200
const MARGIN_MS = 50

let sentinel: RedisSentinel
let client: Redis

beforeAll(async () => {
  sentinel = await startSentinel({ downAfterMs: 1000, failoverTimeoutMs: 5000 })
  // Default settings apart from the sentinel address: offline queue on, reconnects forever.
  client = new Redis({ sentinels: [...sentinel.sentinels], name: sentinel.name })
  await client.ping()
}, 60_000)

afterAll(async () => {
  client?.disconnect()
  await sentinel?.stop()
})

/** The port the sentinel gives clients for the master now. */
function masterPort(): number {
  const out = execFileSync(
    'redis-cli',
    ['-p', String(sentinel.sentinel.port), 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', sentinel.name],
    { encoding: 'utf8', timeout: 2000, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  return Number(out.split('\n')[1])
}

describe('Redis Sentinel failover', () => {
  it('master SIGKILLed: answers per failureMode by the deadline; Redis decides again on the promoted replica', async () => {
    const errors: Record<'open' | 'closed', LimiterError[]> = { open: [], closed: [] }
    const limiters = (['open', 'closed'] as const).map((failureMode) => ({
      failureMode,
      limiter: createLimiter({
        // a counter that outlives the failover (a GCRA state at this rate expires in 1 ms)
        algorithm: 'sliding-window',
        limit: 1_000_000,
        window: '1m',
        name: `sentinel-${failureMode}`,
        store: new RedisStore({ client }),
        timeout: TIMEOUT_MS,
        failureMode,
        onError: (error) => errors[failureMode].push(error),
      }),
    }))
    const keys = Array.from({ length: 10 }, (_, i) => `client-${i}`)
    const round = () => consumeRound(limiters, keys)
    for (const shot of await round()) expect(failureOf(shot.decision)).toBeUndefined()

    const { shots, promotedMs, resumedMs, stallMs } = await watchFailover({
      round,
      kill: () => sentinel.master.process.kill('SIGKILL'),
      // Promoted: the sentinel hands out the replica's address (after it confirmed the switch).
      promoted: () => masterPort() === sentinel.replica.port,
      maxMs: 30_000,
    })
    const failed = shots.filter((s) => failureOf(s.decision) !== undefined)
    const worstMs = Math.max(...shots.map((s) => s.ms))
    console.log(
      [
        '',
        'Redis Sentinel, master SIGKILLed (down-after 1000 ms, default ioredis sentinel client)',
        '| fault | decisions | answered by failureMode | worst latency | lost | sentinel switched to the replica after | Redis decides again after |',
        '|---|---|---|---|---|---|---|',
        `| SIGKILL master | ${shots.length} | ${failed.length} | ${Math.round(worstMs)} ms | 0 | ${promotedMs === undefined ? 'never' : `${Math.round(promotedMs)} ms`} | ${resumedMs === undefined ? 'never' : `${Math.round(resumedMs)} ms (${Math.round(resumedMs - (promotedMs ?? 0))} ms after the switch)`} |`,
        `longest event-loop stall of the test process: ${Math.round(stallMs)} ms; errors reported: open ${errors.open.length}, closed ${errors.closed.length}`,
      ].join('\n'),
    )

    expect(promotedMs).toBeDefined()
    expect(resumedMs).toBeDefined()
    // ioredis reconnects with a growing delay (here about 0.5 s), asking the sentinel each time.
    expect((resumedMs as number) - (promotedMs as number)).toBeLessThanOrEqual(2000)
    expect(failed.length).toBeGreaterThan(0)
    for (const shot of shots) {
      expect(shot.ms).toBeLessThanOrEqual(TIMEOUT_MS + MARGIN_MS + stallMs)
      const failure = failureOf(shot.decision)
      if (failure === undefined || shot.failureMode === 'open')
        expect(shot.decision.allowed).toBe(true)
      else expect(shot.decision).toMatchObject({ allowed: false, retryAfterMs: 1000 })
    }
    expect(errors.open.length).toBeGreaterThan(0)
    expect(errors.closed.length).toBeGreaterThan(0)

    // Limiting works on the new master, and the state written before the failover survived it
    // (the replica had it).
    const limiter = limiters[1]?.limiter
    const promoted = new Redis(sentinel.replica.port, '127.0.0.1')
    try {
      const algorithm = limiter?.policy.algorithm ?? 'gcra'
      const namespace = storeNamespace('rl:', limiter?.name ?? '', algorithm, true)
      const [key] = redisKeys(algorithm, namespace, 'client-0')
      expect(await promoted.pttl(key as string)).toBeGreaterThan(0)
      const tight = createLimiter({
        limit: 2,
        window: '1m',
        store: new RedisStore({ client }),
        failureMode: 'closed',
      })
      const decisions = [
        await tight.consume('after'),
        await tight.consume('after'),
        await tight.consume('after'),
      ]
      expect(decisions.map((d) => [d.allowed, failureOf(d)])).toEqual([
        [true, undefined],
        [true, undefined],
        [false, undefined],
      ])
      const [tightKey] = redisKeys(tight.policy.algorithm, `rl:${tight.name}:`, 'after')
      expect(await promoted.pttl(tightKey as string)).toBeGreaterThan(0)
    } finally {
      promoted.disconnect()
    }
  }, 60_000)
})
