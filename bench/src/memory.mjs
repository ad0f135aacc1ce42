// Section 3: Redis memory per key (INFO used_memory delta, MEMORY USAGE), and sliding-log growth.
import { ipKey } from './config.mjs'
import { drive } from './drive.mjs'
import { connect } from './redis-client.mjs'
import { sampleKeys, usedMemory } from './redis-stats.mjs'

// 100 an hour: one request keeps a bucket or GCRA key alive for 36 s, longer than any fill takes.
const POLICY = { limit: 100, windowMs: 3_600_000 }
const SAMPLES = 100

/**
 * Creates `keys` user keys (one decision each, or `perKey` for full logs) and measures what
 * Redis grew by. Scripts are loaded (one throwaway decision) before the baseline is read.
 */
async function fill(
  contender,
  { port, admin, keys, perKey = 1, limit = POLICY.limit, inFlight = 256 },
) {
  const instance = await contender.create({
    connect: (o) => connect(port, o),
    limit,
    windowMs: POLICY.windowMs,
  })
  try {
    await instance.decide('warm-up')
    await admin.flushdb()
    const before = await usedMemory(admin)
    const run = await drive(instance.decide, {
      keyAt: (i) => ipKey((i - 1) % keys),
      inFlight,
      durationMs: 600_000,
      maxOps: keys * perKey,
      allowedOf: instance.allowed,
    })
    const after = await usedMemory(admin)
    const redisKeys = await admin.dbsize()
    const sample = await sampleKeys(admin, SAMPLES)
    return {
      keys,
      perKey,
      allowedShare: run.allowedShare,
      errors: run.errors,
      redisKeysPerKey: redisKeys / keys,
      usedMemoryPerKey: (after - before) / keys,
      memoryUsagePerKey: (sample.memoryUsage * redisKeys) / keys,
      ttlShare: sample.ttlShare,
    }
  } finally {
    await instance.close()
    await admin.flushdb()
  }
}

/** Bytes per key for every Redis contender (the auto-pipelined twin of the INCR script is left out). */
export async function runMemory({ profile, port, admin, contenders, log }) {
  const rows = []
  for (const contender of contenders) {
    if (contender.store !== 'redis' || contender.id.includes('autopipelined')) continue
    const result = await fill(contender, { port, admin, keys: profile.keysForMemory })
    log(`  ${contender.id.padEnd(40)} ${result.usedMemoryPerKey.toFixed(1)} B/key (used_memory)`)
    rows.push({
      id: contender.id,
      owner: contender.owner,
      label: contender.label,
      algorithm: contender.algorithm,
      ...result,
    })
  }
  rows.push(...(await floors({ admin, keys: profile.keysForMemory, log })))
  return rows
}

/**
 * The floor for one key per user key with a TTL: `SET <name> 0 PX` (a shared small integer, so
 * the value costs nothing), for a name of at most 14 bytes and one of 15-30. Redis (jemalloc)
 * stores a name in a 16-byte allocation up to 14 bytes and a 32-byte one up to 30, so these two
 * rows bound what any one-key-per-client limiter can reach with such names.
 */
async function floors({ admin, keys, log }) {
  const shapes = [
    ['floor: SET <ip> 0 PX (name <= 14 bytes)', (i) => ipKey(i)],
    ['floor: SET <ns>{<ip>} 0 PX (name 15-30 bytes)', (i) => `rl:gc100/1h:{${ipKey(i)}}`],
  ]
  const rows = []
  for (const [label, nameOf] of shapes) {
    await admin.flushdb()
    const before = await usedMemory(admin)
    for (let from = 0; from < keys; from += 1000) {
      const pipeline = admin.pipeline()
      for (let i = from; i < Math.min(keys, from + 1000); i++)
        pipeline.set(nameOf(i), '0', 'PX', POLICY.windowMs)
      await pipeline.exec()
    }
    const after = await usedMemory(admin)
    const sample = await sampleKeys(admin, SAMPLES)
    const redisKeys = await admin.dbsize()
    await admin.flushdb()
    log(`  ${label.padEnd(40)} ${((after - before) / keys).toFixed(1)} B/key (used_memory)`)
    rows.push({
      id: `reference/${label}`,
      owner: 'reference',
      label,
      keys,
      perKey: 1,
      allowedShare: Number.NaN,
      errors: 0,
      redisKeysPerKey: redisKeys / keys,
      usedMemoryPerKey: (after - before) / keys,
      memoryUsagePerKey: sample.memoryUsage,
      ttlShare: sample.ttlShare,
    })
  }
  return rows
}

/**
 * Sliding logs at their limit: ours (a record per millisecond with admissions) and koa-ratelimit
 * (a sorted-set member per request). Filled one decision at a time, so consecutive hits of one
 * key (`keys` decisions apart) land in different milliseconds: the worst case for our log, which
 * merges the admissions of one millisecond into one record.
 */
export async function runSlidingLog({ profile, port, admin, contenders, log }) {
  const logs = contenders.filter(
    (c) => c.id === 'ours/sliding-log/redis' || c.id === 'koa-ratelimit/redis',
  )
  const rows = []
  for (const { limit, keys } of profile.slidingLog) {
    for (const contender of logs) {
      const result = await fill(contender, { port, admin, keys, perKey: limit, limit, inFlight: 1 })
      log(
        `  ${contender.id.padEnd(40)} limit ${limit}: ${result.usedMemoryPerKey.toFixed(0)} B/key`,
      )
      rows.push({
        id: contender.id,
        label: contender.label,
        limit,
        ...result,
        bytesPerEntry: result.usedMemoryPerKey / limit,
      })
    }
  }
  return rows
}
