// Concurrency limits and waiting across real child processes sharing one Redis (and a Cluster):
// requests in flight never exceed the limit, leases never leak, a killed process's leases expire
// after `window`, and a burst under maxDelay starts no faster than the policy allows.
import { spawn } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { watchLoad } from '../../../test-support/load.js'
import { createLimiter, RedisStore } from '../src/index.js'
import { clusterEnv, fixture, requireBuilt, runFixture, topologies } from './setup/processes.js'
import { scanKeys, useCluster, useRedis } from './setup/redis.js'

const waiter = fixture('waiter.mjs')
const redis = useRedis()
const cluster = useCluster(3, 0)

requireBuilt()

const child = (ports: string, args: readonly string[], clustered = false): Promise<string> =>
  runFixture('waiter.mjs', [ports, ...args], { env: clusterEnv(clustered) })

// The most handlers running at once, from their [start, end] intervals (an end before a start
// at the same instant: a slot is released after its handler ends, and taken before one starts).
function maxInFlight(intervals: ReadonlyArray<readonly [number, number]>): number {
  const events = intervals.flatMap(([start, end]) => [
    [start, 1],
    [end, -1],
  ])
  events.sort((a, b) => (a[0] as number) - (b[0] as number) || (a[1] as number) - (b[1] as number))
  let now = 0
  let most = 0
  for (const [, delta] of events) {
    now += delta as number
    if (now > most) most = now
  }
  return most
}

describe.each(topologies(redis, cluster))('on %s', (_name, ports, client, clustered) => {
  it('4 processes x 200 requests, limit 5: never more than 5 in flight, 5 reached, no lease left, every key with a TTL', async () => {
    const key = `flight-${Date.now()}`
    const running = Promise.all(
      Array.from({ length: 4 }, () =>
        child(ports(), ['inflight', key, '200', '5', '30000'], clustered),
      ),
    )
    // meanwhile, every lease key seen has a TTL
    let done = false
    running.finally(() => {
      done = true
    })
    let sampled = 0
    while (!done) {
      for (const k of await scanKeys(client(), 'rl:inflight:cc:*')) {
        const pttl = await client().pttl(k)
        // -2: gone between SCAN and PTTL (its last lease released)
        if (pttl !== -2) expect(pttl, k).toBeGreaterThan(0)
        sampled++
      }
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(sampled).toBeGreaterThan(0)
    const outputs = await running
    const handled = outputs.flatMap((o) => JSON.parse(o) as Array<[number, number, number]>)
    expect(handled).toHaveLength(800)
    // by the machine's one monotonic clock, and by a counter in Redis the handlers move
    expect(maxInFlight(handled.map(([start, end]) => [start, end] as const))).toBe(5)
    expect(Math.max(...handled.map(([, , count]) => count))).toBe(5)
    // every lease was released: no key remains (the sorted set's last member takes it along)
    expect(await scanKeys(client(), `rl:inflight:cc:*`)).toEqual([])
    await client().del(`probe:${key}`)
  }, 90_000)
})

describe('a process killed while holding slots', () => {
  it('frees them when `window` has passed, and not before', async () => {
    const key = `killed-${Date.now()}`
    const proc = spawn(process.execPath, [
      waiter,
      String(redis.server.port),
      'hold',
      key,
      '3',
      '3',
      '1500',
    ])
    const heldAt = await new Promise<number>((resolve, reject) => {
      proc.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('held')) resolve(Date.now())
      })
      proc.on('error', reject)
      proc.on('exit', (code) => reject(new Error(`child exited early (${code})`)))
    })
    proc.kill('SIGKILL')
    const limiter = createLimiter({
      algorithm: 'concurrency',
      limit: 3,
      window: '1500ms',
      name: 'held',
      store: new RedisStore({ client: redis.client }),
    })
    const refused = await limiter.consume(key)
    expect(refused.allowed).toBe(false)
    const stored = await scanKeys(redis.client, `rl:held:cc:*${key}*`)
    expect(stored).toHaveLength(1)
    const pttl = await redis.client.pttl(stored[0] as string)
    expect(pttl).toBeGreaterThan(0)
    expect(pttl).toBeLessThanOrEqual(1500)
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, heldAt + 1000 - Date.now())))
    expect((await limiter.consume(key)).allowed).toBe(false)
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, heldAt + 1600 - Date.now())))
    const after = await limiter.consume(key)
    expect(after).toMatchObject({ allowed: true, remaining: 2 })
  }, 20_000)
})

describe('maxDelay across processes', () => {
  it('4 processes, a burst of 400 at 50/s with maxDelay 10 s: starts conform to the rate, none lost', async () => {
    const load = await watchLoad({ cap: 10 })
    const key = `burst-${Date.now()}`
    const startAt = Date.now() + 1500
    const outputs = await Promise.all(
      Array.from({ length: 4 }, () =>
        child(String(redis.server.port), [
          'burst',
          key,
          '100',
          '50',
          '1000',
          String(startAt),
          '10000',
        ]),
      ),
    )
    const results = outputs.map(
      (o) => JSON.parse(o) as { starts: Array<[number, number, number]>; refused: number[] },
    )
    const handled = results.flatMap((r) => r.starts)
    const refused = results.flatMap((r) => r.refused)
    // none lost: every request ran or was refused with a Retry-After
    expect(handled.length + refused.length).toBe(400)
    for (const retry of refused) expect(retry).toBeGreaterThan(0)
    // 400 at 50/s take 8 s, within maxDelay: all run
    expect(handled).toHaveLength(400)
    // no handler starts before its slot (timers never fire early)
    for (const [due, start] of handled) expect(start).toBeGreaterThanOrEqual(due - 1)
    // The slots conform to GCRA with burst 1 at 20 ms: k + 1 of them span at least k x 20 ms.
    // A slot is unknown here (Redis decided it between a request's call and its reply), but it
    // lies between `call + delayMs` and the start; so k + 1 starts, in start order, must span
    // from the earliest `call + delayMs` among them to the last start (as in
    // delay-processes.test.ts). Only the limiter can break that: late replies and late timers
    // on a busy machine only widen it. ROUNDING_MS: delayMs is rounded up to a whole ms, and a
    // timer may fire up to 1 ms early. (The old check used reply + delayMs, which carries each
    // reply's latency: a 15 ms tolerance that a loaded machine exceeded.)
    const ROUNDING_MS = 2
    const rows = [...handled].sort((a, b) => a[1] - b[1])
    let shortfall = Number.NEGATIVE_INFINITY
    for (let i = 0; i < rows.length; i++) {
      let earliest = Number.POSITIVE_INFINITY
      for (let k = 0; i + k < rows.length && k <= 60; k++) {
        const [, start, lowest] = rows[i + k] as [number, number, number]
        earliest = Math.min(earliest, lowest)
        shortfall = Math.max(shortfall, k * 20 - (start - earliest))
      }
    }
    if (process.env.REPORT_SLACK)
      console.log(`worst shortfall ${shortfall.toFixed(2)} ms (rounding ${ROUNDING_MS} ms)`)
    expect(shortfall).toBeLessThanOrEqual(ROUNDING_MS)
    // The whole burst: its slots span at least 399 x 20 ms (widest reading of the bounds, as
    // above), and not much more: the narrowest reading (latest call + delayMs to earliest start)
    // stays within 500 ms of slack idle, scaled by the load (a rate half as fast still fails).
    const lowest = handled.map(([, , low]) => low)
    const startsOnly = handled.map(([, start]) => start)
    expect(Math.max(...startsOnly) - Math.min(...lowest)).toBeGreaterThanOrEqual(
      399 * 20 - ROUNDING_MS,
    )
    const narrowest = Math.max(...lowest) - Math.min(...startsOnly)
    expect(narrowest, load.describe(399 * 20, 500)).toBeLessThan(load.budget(399 * 20, 500))
    load.stop()
  }, 60_000)
})
