// Dev helper: one contender, one scenario, printed; run with --cpu-prof to profile.
// node src/profile-one.mjs <algorithm> <redis|memory> [inFlight] [ms]
import { createLimiter, MemoryStore, RedisStore } from '@limiter/core'
import { SCENARIOS } from './config.mjs'
import { drive } from './drive.mjs'
import { connect } from './redis-client.mjs'
import { startRedis } from './redis-server.mjs'

const [algorithm = 'gcra', storeKind = 'redis', inFlightArg = '256', msArg = '3000'] =
  process.argv.slice(2)
const scenario = SCENARIOS[0]
const server = storeKind === 'redis' ? await startRedis() : undefined
try {
  const client = server ? await connect(server.port) : undefined
  const limiter = createLimiter({
    algorithm,
    limit: scenario.limit,
    window: scenario.windowMs,
    store: client ? new RedisStore({ client }) : new MemoryStore({ maxKeys: 200_000 }),
  })
  const decide = (key) => limiter.consume(key).then((d) => d.allowed)
  const opts = { keyAt: scenario.keyAt, inFlight: Number(inFlightArg) }
  await drive(decide, { ...opts, durationMs: 500 })
  for (let i = 0; i < 3; i++) {
    const r = await drive(decide, { ...opts, durationMs: Number(msArg) })
    console.log(
      `${algorithm} ${storeKind} ${Math.round(r.perSecond / 1000)}k/s cpu ${r.cpuUsPerDecision.toFixed(2)}µs p99 ${r.p99Ms.toFixed(2)} allowed ${r.allowedShare}`,
    )
  }
  await client?.quit()
} finally {
  await server?.stop()
}
