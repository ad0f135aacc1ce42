// Dev helper: one contender, one scenario, printed; run with --cpu-prof to profile.
// node src/profile-one.mjs <algorithm> <redis|memory> [inFlight] [ms] [batch.maxSize]
import { createLimiter, MemoryStore, RedisStore } from '@limiter/core'
import { startRedis } from '../../test-support/redis-server.mjs'
import { SCENARIOS } from './config.mjs'
import { drive } from './drive.mjs'
import { connect } from './redis-client.mjs'

const [algorithm = 'gcra', storeKind = 'redis', inFlightArg = '256', msArg = '3000', batchArg] =
  process.argv.slice(2)
const scenario = SCENARIOS[0]
const server = storeKind === 'redis' ? await startRedis() : undefined
try {
  const client = server ? await connect(server.port) : undefined
  const limiter = createLimiter({
    algorithm,
    limit: scenario.limit,
    window: scenario.windowMs,
    store: client
      ? new RedisStore({ client, batch: batchArg ? { maxSize: Number(batchArg) } : undefined })
      : new MemoryStore({ maxKeys: 200_000 }),
  })
  const decide = (key) => limiter.consume(key).then((d) => d.allowed)
  const opts = { keyAt: scenario.keyAt, inFlight: Number(inFlightArg) }
  await drive(decide, { ...opts, durationMs: 500 })
  // Redis CPU seconds so far (user + sys), from INFO cpu.
  const redisCpu = async () => {
    if (!client) return 0
    const info = await client.info('cpu')
    const field = (name) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0)
    return field('used_cpu_user') + field('used_cpu_sys')
  }
  for (let i = 0; i < 3; i++) {
    const cpuBefore = await redisCpu()
    const r = await drive(decide, { ...opts, durationMs: Number(msArg) })
    const redisUs = (((await redisCpu()) - cpuBefore) * 1e6) / r.decisions
    console.log(
      `${algorithm} ${storeKind} ${Math.round(r.perSecond / 1000)}k/s cpu ${r.cpuUsPerDecision.toFixed(2)}µs${client ? ` redis ${redisUs.toFixed(2)}µs` : ''} p99 ${r.p99Ms.toFixed(2)} allowed ${r.allowedShare}`,
    )
  }
  await client?.quit()
} finally {
  await server?.stop()
}
