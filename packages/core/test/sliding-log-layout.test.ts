// sliding-log's Redis layout: one string per user key, one 10-byte record per admission time.

import { describe, expect, it } from 'vitest'
import {
  createLimiter,
  type Decision,
  type Limiter,
  MemoryStore,
  RedisStore,
  redisKeys,
} from '../src/index.js'
import { withClock } from '../src/testing/index.js'
import { useRedis } from './setup/redis.js'

const redis = useRedis()
let run = 0

/** The same sliding-log on Redis and in memory, both on the test's clock. */
function pair(limit: number, windowMs: number) {
  const clock = { now: 1_700_000_000_000 }
  const prefix = `sll${run++}:`
  const options = { algorithm: 'sliding-log' as const, limit, window: windowMs, prefix }
  const onRedis = createLimiter(
    withClock({ ...options, store: new RedisStore({ client: redis.client }) }, () => clock.now),
  )
  const inMemory = createLimiter(
    withClock({ ...options, store: new MemoryStore() }, () => clock.now),
  )
  const [key] = redisKeys('sliding-log', `${prefix}${onRedis.name}:`, 'a') as [string]
  return { clock, onRedis, inMemory, key }
}

/** Consumes on both and requires the same decision. */
async function both(limiters: { onRedis: Limiter; inMemory: Limiter }, cost = 1) {
  const fromRedis = await limiters.onRedis.consume('a', cost)
  expect(await limiters.inMemory.consume('a', cost)).toEqual(fromRedis)
  return fromRedis
}

async function refundBoth(
  limiters: { onRedis: Limiter; inMemory: Limiter },
  cost: number,
  decisions?: [Decision, Decision],
) {
  await limiters.onRedis.refund('a', cost, decisions?.[0])
  await limiters.inMemory.refund('a', cost, decisions?.[1])
  const peeked = await limiters.onRedis.peek('a')
  expect(await limiters.inMemory.peek('a')).toEqual(peeked)
  return peeked
}

async function stored(key: string): Promise<Buffer> {
  return (await redis.client.getBuffer(key)) ?? Buffer.alloc(0)
}

/** The log as written: the older records (from the first one held), then the trailer. */
async function layout(key: string) {
  const value = await stored(key)
  const trailer = value.length - 28
  const start = value.readUInt32BE(trailer + 4)
  const records: Array<[number, number]> = []
  for (let at = start - 1; at < trailer; at += 10)
    records.push([value.readUIntBE(at, 6), value.readUInt32BE(at + 6)])
  expect(value.readUInt32BE(trailer + 24), 'the length the trailer holds').toBe(value.length)
  return {
    bytes: value.length,
    sum: value.readUInt32BE(trailer),
    skipped: (start - 1) / 10,
    oldest: value.readUIntBE(trailer + 8, 6),
    newest: [value.readUIntBE(trailer + 14, 6), value.readUInt32BE(trailer + 20)],
    records,
  }
}

describe('sliding-log on Redis', () => {
  it('keeps one record per admission time: the same millisecond adds to it', async () => {
    const p = pair(10, 1000)
    const t0 = p.clock.now
    await both(p)
    await both(p, 2)
    expect(await layout(p.key)).toEqual({
      bytes: 28,
      sum: 3,
      skipped: 0,
      oldest: t0,
      newest: [t0, 3],
      records: [],
    })
    p.clock.now += 1
    await both(p)
    expect(await layout(p.key)).toMatchObject({
      bytes: 38,
      sum: 4,
      oldest: t0,
      newest: [t0 + 1, 1],
      records: [[t0, 3]],
    })
    expect(await redis.client.type(p.key)).toBe('string')
  })

  it('skips records that left the window at the next admission, and writes nothing at a refusal', async () => {
    const p = pair(2, 1000)
    const t0 = p.clock.now
    await both(p)
    p.clock.now += 10
    await both(p)
    expect(await both(p)).toMatchObject({ allowed: false, retryAfterMs: 990 })
    p.clock.now += 990 // the first record leaves the window
    const before = await stored(p.key)
    expect(await both(p, 2)).toMatchObject({ allowed: false, retryAfterMs: 10 })
    expect(await stored(p.key)).toEqual(before)
    expect(await both(p)).toMatchObject({ allowed: true, remaining: 0, resetMs: 1000 })
    expect(await layout(p.key)).toMatchObject({
      sum: 2,
      oldest: t0 + 10,
      newest: [t0 + 1000, 1],
      records: [[t0 + 10, 1]],
    })
  })

  it('walks and compacts long logs exactly as the twin decides', async () => {
    const p = pair(200, 10_000)
    const t0 = p.clock.now
    // 150 admissions, one per 10 ms: more than one 32-record read
    for (let i = 0; i < 150; i++) {
      await both(p)
      p.clock.now += 10
    }
    // cost 60 needs 10 of the oldest to leave: the answer sits past the first reads
    p.clock.now = t0 + 9_000
    expect(await both(p, 60)).toMatchObject({ allowed: false, retryAfterMs: 1_090 })
    // 40 have left the window: skipped, not yet rewritten
    p.clock.now = t0 + 10_395
    expect(await both(p)).toMatchObject({ allowed: true, remaining: 89 })
    let log = await layout(p.key)
    expect(log).toMatchObject({ skipped: 40, sum: 111, oldest: t0 + 400 })
    expect(log.records).toHaveLength(110) // the 150 older ones, less the 40 skipped
    // more than half left: the next admission rewrites the log without them
    p.clock.now = t0 + 10_905
    expect(await both(p)).toMatchObject({ allowed: true, remaining: 139 })
    log = await layout(p.key)
    expect(log).toMatchObject({ skipped: 0, sum: 61, oldest: t0 + 910 })
    expect(log.records).toHaveLength(60)
    expect(log.bytes).toBe(28 + 60 * 10)
    for (let i = 0; i < 30; i++) {
      p.clock.now += 37
      await both(p, (i % 3) + 1)
    }
    expect(await both(p, 150)).toMatchObject({ allowed: false })
  })

  it('a clock that steps back records at the newest time, so it never admits more', async () => {
    const p = pair(3, 1000)
    await both(p)
    p.clock.now -= 500 // e.g. another Redis after a failover, behind this one
    const stepped = await both(p)
    // Recorded 500 ms ahead of the clock: full again 1500 ms from now, not 1000.
    expect(stepped).toMatchObject({ allowed: true, remaining: 1, resetMs: 1500 })
    p.clock.now += 1000 // 500 ms after the first admission on the first clock: both still count
    expect(await both(p)).toMatchObject({ allowed: true, remaining: 0 })
    expect(await both(p)).toMatchObject({ allowed: false, retryAfterMs: 500 })
    expect((await layout(p.key)).records).toHaveLength(1)
  })

  it("a refund with the decision takes back that admission's cost from its record", async () => {
    const p = pair(10, 1000)
    const t0 = p.clock.now
    const first: [Decision, Decision] = [
      await p.onRedis.consume('a', 2),
      await p.inMemory.consume('a', 2),
    ]
    await both(p, 3) // same millisecond: one record of 5
    p.clock.now += 100
    await both(p, 4) // a newer record
    expect(await refundBoth(p, 2, first)).toMatchObject({ remaining: 3 })
    expect(await layout(p.key)).toMatchObject({
      sum: 7,
      records: [[t0, 3]], // the older record lost the 2 it was given
      newest: [t0 + 100, 4],
    })
    // Without a decision, the cost comes back from the newest records first.
    expect(await refundBoth(p, 5)).toMatchObject({ remaining: 8 })
    expect(await layout(p.key)).toMatchObject({ bytes: 28, sum: 2, newest: [t0, 2] })
    // Refunding the same admission again takes nothing more than its cost from its record.
    expect(await refundBoth(p, 2, first)).toMatchObject({ remaining: 10, resetMs: 0 })
    expect(await redis.client.exists(p.key)).toBe(0)
  })

  it('a refund after the admission left the window gives nothing back', async () => {
    const p = pair(2, 1000)
    const first: [Decision, Decision] = [
      await p.onRedis.consume('a'),
      await p.inMemory.consume('a'),
    ]
    p.clock.now += 1000
    await both(p)
    await both(p)
    expect(await refundBoth(p, 1, first)).toMatchObject({ remaining: 0 })
  })

  it.each([
    ['a sorted set (an older layout)', (key: string) => redis.client.zadd(key, 1, 'm')],
    ['a string of another shape', (key: string) => redis.client.set(key, 'not a log')],
    ['a hash', (key: string) => redis.client.hset(key, 'f', 'v')],
  ])('a key holding %s reads as empty and is replaced', async (_, write) => {
    const p = pair(2, 60_000)
    await write(p.key)
    expect(await p.onRedis.consume('a')).toMatchObject({ allowed: true, remaining: 1 })
    expect(await redis.client.type(p.key)).toBe('string')
    expect(await layout(p.key)).toMatchObject({ bytes: 28, sum: 1 })
    expect(await redis.client.pttl(p.key)).toBeGreaterThan(0)
  })
})
