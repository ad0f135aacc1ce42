// Child process for one in-memory measurement: a fresh heap per run, so no contender pays for the
// state (maps, timers) that earlier ones left behind in a long bench process.
// Argument: JSON { id, scenario, inFlight, runMs, warmupMs }; prints one JSON line: drive()'s result.
import { SCENARIOS } from './config.mjs'
import { CONTENDERS } from './contenders/index.mjs'
import { drive } from './drive.mjs'

const { id, scenario: scenarioId, inFlight, runMs, warmupMs } = JSON.parse(process.argv[2])
const contender = CONTENDERS.find((c) => c.id === id)
const scenario = SCENARIOS.find((s) => s.id === scenarioId)
const { limit, windowMs, keyAt } = scenario
const instance = await contender.create({
  connect: () => Promise.reject(new Error('in-memory contenders have no Redis')),
  limit,
  windowMs,
})
const allowedOf = instance.allowed
await drive(instance.decide, { keyAt, inFlight, durationMs: warmupMs, allowedOf })
const run = await drive(instance.decide, { keyAt, inFlight, durationMs: runMs, allowedOf })
await instance.close()
process.stdout.write(`${JSON.stringify(run)}\n`)
// Peers' memory stores may hold timers open: the measurement is done.
process.exit(0)
