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
async function fill(contender, { port, admin, keys, perKey = 1, limit = POLICY.limit }) {
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
      inFlight: 256,
      durationMs: 600_000,
      maxOps: keys * perKey,
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
  return rows
}

/** Sliding logs at their limit: ours and koa-ratelimit (also one sorted-set member per request). */
export async function runSlidingLog({ profile, port, admin, contenders, log }) {
  const logs = contenders.filter(
    (c) => c.id === 'ours/sliding-log/redis' || c.id === 'koa-ratelimit/redis',
  )
  const rows = []
  for (const { limit, keys } of profile.slidingLog) {
    for (const contender of logs) {
      const result = await fill(contender, { port, admin, keys, perKey: limit, limit })
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
