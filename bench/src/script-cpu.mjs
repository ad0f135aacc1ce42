// Dev helper: Redis's own time per decision in the decision scripts (INFO commandstats,
// `usec` of EVALSHA/EVAL over the decisions made), for one policy against two on one key, on one
// build of @limiter/core (default: this workspace's; `--core=<path to a core dist/index.mjs>`
// for another, e.g. a base checkout). Load on the host moves wall-clock throughput, much less
// the time Redis spends inside its own commands.
// node src/script-cpu.mjs [--core=path] [--ms=2000] [--reps=3] [--shapes=one,gc+gc,gc+fw]

import { startRedis } from '../../test-support/redis-server.mjs'
import { drive } from './drive.mjs'
import { connect } from './redis-client.mjs'

const flags = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v = 'true'] = a.replace(/^--/, '').split('=')
    return [k, v]
  }),
)
const core = await import(flags.core ?? '@limiter/core')
const ms = Number(flags.ms ?? 2000)
const reps = Number(flags.reps ?? 3)
const inFlight = Number(flags.inFlight ?? 256)

const SHAPES = {
  one: { algorithm: 'gcra', limit: 100, window: 1000 },
  fw: { algorithm: 'fixed-window', limit: 10_000, window: 86_400_000 },
  'gc+gc': {
    limits: [
      { name: 'second', algorithm: 'gcra', limit: 100, window: 1000 },
      { name: 'hour', algorithm: 'gcra', limit: 10_000, window: 3_600_000 },
    ],
  },
  'gc+fw': {
    limits: [
      { name: 'second', algorithm: 'gcra', limit: 100, window: 1000 },
      { name: 'day', algorithm: 'fixed-window', limit: 10_000, window: 86_400_000 },
    ],
  },
  'gc+gc+gc': {
    limits: [
      { name: 'second', algorithm: 'gcra', limit: 100, window: 1000 },
      { name: 'minute', algorithm: 'gcra', limit: 1000, window: 60_000 },
      { name: 'hour', algorithm: 'gcra', limit: 10_000, window: 3_600_000 },
    ],
  },
}
const shapes = (flags.shapes ?? 'one,gc+gc,gc+fw').split(',')

function scriptUsec(info) {
  let usec = 0
  let calls = 0
  for (const line of info.split('\r\n')) {
    const m = /^cmdstat_(evalsha|eval):calls=(\d+),usec=(\d+)/.exec(line)
    if (m) {
      calls += Number(m[2])
      usec += Number(m[3])
    }
  }
  return { usec, calls }
}

const server = await startRedis()
try {
  const client = await connect(server.port)
  const admin = await connect(server.port)
  for (let rep = 0; rep < reps; rep++) {
    for (const shape of shapes) {
      const limiter = core.createLimiter({
        ...SHAPES[shape],
        store: new core.RedisStore({ client }),
      })
      const decide = (key) => limiter.consume(key).then((d) => d.allowed)
      const keys = (i) => `10.1.${(i % 10_000) >> 8}.${i % 256}`
      await drive(decide, { keyAt: keys, inFlight, durationMs: 300 })
      await admin.config('RESETSTAT')
      const r = await drive(decide, { keyAt: keys, inFlight, durationMs: ms })
      const { usec, calls } = scriptUsec(await admin.info('commandstats'))
      console.log(
        `${shape.padEnd(9)} ${(usec / r.decisions).toFixed(3)} µs/decision  ${(usec / calls).toFixed(1)} µs/call  ${(r.decisions / calls).toFixed(1)} dec/call  ${Math.round(r.perSecond / 1000)}k/s  allowed ${r.allowedShare}`,
      )
      await admin.flushdb()
    }
  }
  await client.quit()
  await admin.quit()
} finally {
  await server.stop()
}
