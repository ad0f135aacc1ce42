// `pnpm bench` / `pnpm bench:quick`: starts a private Redis, runs every section, writes
// bench/results/ and prints the headline. Options: --quick, --only=decisions,two-limits,concurrency,waiters,clients,events,memory,http,overload,
// --http-algorithm=<algorithm> (our adapters' default otherwise), --http-frameworks=hono,express
// (the HTTP section on those frameworks only), --no-build (measure the
// packages' dist as it is instead of building core and the adapters first), and for short
// checks --run-ms=<ms> (each timed Redis and in-memory run), --reps=<n>, --out=<dir> (instead
// of bench/results/), --events-base=<dir> (another build's packages/core, measured with nobody
// subscribed next to this one in the events section), --overload-servers=io and
// --overload-contenders=ours (the overload section on those servers and contenders only).
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import { startRedis } from '../../test-support/redis-server.mjs'
import { buildPackages } from './build.mjs'
import { checkResults } from './checks.mjs'
import { PROFILES } from './config.mjs'
import { connectAdmin } from './redis-client.mjs'
import { redisVersion } from './redis-stats.mjs'

const SECTIONS = [
  'decisions',
  'two-limits',
  'concurrency',
  'waiters',
  'clients',
  'events',
  'inspector',
  'memory',
  'http',
  'overload',
]
const args = process.argv.slice(2)
const option = (name) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1]
const positive = (name) => {
  const value = option(name)
  if (value === undefined) return undefined
  const n = Number(value)
  if (Number.isInteger(n) && n > 0) return n
  console.error(`--${name} must be a positive integer, got ${JSON.stringify(value)}`)
  process.exit(1)
}
const profile = { ...PROFILES[args.includes('--quick') ? 'quick' : 'full'] }
const runMs = positive('run-ms')
if (runMs !== undefined) Object.assign(profile, { redisRunMs: runMs, memoryRunMs: runMs })
profile.reps = positive('reps') ?? profile.reps
const only = option('only')?.split(',') ?? SECTIONS
const unknown = only.filter((name) => !SECTIONS.includes(name))
if (unknown.length > 0) {
  console.error(`--only: no section ${unknown.join(', ')} (sections: ${SECTIONS.join(', ')})`)
  process.exit(1)
}
const outDir = option('out')
const httpAlgorithm = option('http-algorithm')
const httpFrameworks = option('http-frameworks')?.split(',')
if (httpFrameworks !== undefined) profile.http = { ...profile.http, frameworks: httpFrameworks }
const overloadServers = option('overload-servers')?.split(',')
const overloadContenders = option('overload-contenders')?.split(',')
const eventsBase = option('events-base')
if (eventsBase !== undefined && !existsSync(`${eventsBase}/dist/index.mjs`)) {
  console.error(`--events-base: no built core at ${eventsBase} (expected dist/index.mjs there)`)
  process.exit(1)
}
const log = (line) => console.log(line)

if (!args.includes('--no-build')) {
  try {
    buildPackages(log)
  } catch (error) {
    console.error(error.message)
    process.exit(1)
  }
}
const CORE_DIST = fileURLToPath(new URL('../../packages/core/dist/index.mjs', import.meta.url))
if (!existsSync(CORE_DIST)) {
  console.error(
    '@limiter/core is not built: run `pnpm --filter @limiter/core build` (or `pnpm build`) first.',
  )
  process.exit(1)
}

function packageVersion(name) {
  try {
    const url = new URL(`../node_modules/${name}/package.json`, import.meta.url)
    return JSON.parse(readFileSync(url, 'utf8')).version
  } catch {
    return 'missing'
  }
}

/** The commit measured, with "+ changes" when packages/ or lua/ differ from it. */
function commit() {
  const git = (...a) =>
    execFileSync('git', a, { cwd: new URL('..', import.meta.url), encoding: 'utf8' }).trim()
  try {
    const dirty = git('status', '--porcelain', '--', '../packages', '../lua') !== ''
    return `${git('rev-parse', '--short', 'HEAD')}${dirty ? ' + uncommitted changes' : ''}`
  } catch {
    return 'unknown'
  }
}

/** The command as run: the profile's script, with any other options after `--`. */
function command() {
  const extra = args.filter((a) => a !== '--quick' && !a.startsWith('--out='))
  const script = profile.name === 'quick' ? 'pnpm bench:quick' : 'pnpm bench'
  return extra.length === 0 ? script : `${script} -- ${extra.join(' ')}`
}

function machine() {
  const cpus = os.cpus()
  const gib = (os.totalmem() / 2 ** 30).toFixed(0)
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')
  return `${cpus[0]?.model ?? 'unknown CPU'}, ${cpus.length} cores, ${gib} GiB, ${os.type()} ${os.release()}; load average at start ${load}`
}

async function main() {
  const started = performance.now()
  // Imported here so a missing build fails with the message above, not a stack trace.
  const { CONTENDERS } = await import('./contenders/index.mjs')
  const { runDecisions } = await import('./decisions.mjs')
  const { runMemoryPaired } = await import('./memory-paired.mjs')
  const { runTwoLimits } = await import('./two-limits.mjs')
  const { runConcurrency, runOutbound } = await import('./concurrency.mjs')
  const { clientsLines, runClients } = await import('./clients.mjs')
  const { runMemory, runSlidingLog } = await import('./memory.mjs')
  const { runHttp } = await import('./http/load.mjs')
  const { runHonoPaired } = await import('./http/hono-paired.mjs')
  const { headlineLines, headlineTable } = await import('./report/headline.mjs')
  const { twoLimitsLines } = await import('./report/two-limits.mjs')
  const { concurrencyLines } = await import('./report/concurrency.mjs')
  const { runEvents } = await import('./events.mjs')
  const { eventsLines } = await import('./report/events.mjs')
  const { runWaitersSection } = await import('./waiters.mjs')
  const { waitersLines } = await import('./report/waiters.mjs')
  const { writeResults } = await import('./results.mjs')
  const { runOverload } = await import('./overload.mjs')
  const { overloadTargets } = await import('./overload-report.mjs')

  const redis = await startRedis()
  log(`bench (${profile.name}): private redis-server pid ${redis.pid} on 127.0.0.1:${redis.port}`)
  const stop = () => redis.stop().then(() => process.exit(130))
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  const admin = await connectAdmin(redis.port)
  const context = {
    profile,
    overloadServers,
    overloadContenders,
    port: redis.port,
    admin,
    contenders: CONTENDERS,
    log,
    algorithm: httpAlgorithm,
    eventsBase,
  }
  const results = {
    meta: {},
    decisions: [],
    twoLimits: [],
    concurrency: [],
    outbound: undefined,
    waiters: [],
    clients: [],
    events: [],
    memory: [],
    slidingLog: [],
    http: [],
    overload: undefined,
  }
  try {
    const versions = { limiter: commit(), node: process.version, redis: await redisVersion(admin) }
    for (const name of [
      '@limiter/core',
      'ioredis',
      'redis',
      'express-rate-limit',
      'rate-limit-redis',
      'rate-limiter-flexible',
      '@fastify/rate-limit',
      '@opentelemetry/sdk-metrics',
      'koa-ratelimit',
      'express',
      'koa',
      'fastify',
      'hono',
      '@hono/node-server',
      'hono-rate-limiter',
      '@nestjs/core',
      '@nestjs/throttler',
      '@nest-lab/throttler-storage-redis',
      'autocannon',
      '@fastify/under-pressure',
    ]) {
      versions[name] = packageVersion(name)
    }
    const sectionS = {}
    const section = async (name, title, run) => {
      if (!only.includes(name)) return
      log(title)
      const t0 = performance.now()
      await run()
      sectionS[name] = Math.round((performance.now() - t0) / 1000)
    }
    await section(
      'decisions',
      '1, 4. decisions/s, latency, CPU and Redis commands per decision (no HTTP)',
      async () => {
        results.decisions = await runDecisions(context)
        log('1. MemoryStore, paired rounds')
        results.memoryPaired = await runMemoryPaired(context)
      },
    )
    await section(
      'two-limits',
      '5. two limits on one key: decisions/s, CPU per decision, quota burned by refused requests',
      async () => {
        results.twoLimits = await runTwoLimits(context)
      },
    )
    await section(
      'concurrency',
      '6. concurrency limits: a slot per request, and the outbound example',
      async () => {
        results.concurrency = await runConcurrency(context)
        results.outbound = await runOutbound(context)
      },
    )
    await section(
      'waiters',
      '9. waiters for a concurrency slot: store calls per run(), one process and several',
      async () => {
        results.waiters = await runWaitersSection(context)
      },
    )
    await section(
      'clients',
      '7. client libraries: ours on ioredis and on node-redis, the peers on node-redis',
      async () => {
        results.clients = await runClients(context)
      },
    )
    await section(
      'events',
      '8. events: nobody subscribed, a bare subscriber, the OpenTelemetry bridge, the inspector',
      async () => {
        results.events = await runEvents(context)
      },
    )
    // the inspector's row of section 8 alone (section 8 has it already)
    if (!only.includes('events'))
      await section('inspector', '8. events: nobody subscribed, the inspector', async () => {
        results.events = await runEvents(context, ['none', 'inspector'])
      })
    await section(
      'memory',
      `3. Redis memory per key (${profile.keysForMemory} keys each)`,
      async () => {
        results.memory = await runMemory(context)
        results.slidingLog = await runSlidingLog(context)
      },
    )
    await section('http', '2. HTTP with autocannon', async () => {
      results.http = await runHttp(context)
      if (!profile.http.frameworks || profile.http.frameworks.includes('hono'))
        results.honoPaired = await runHonoPaired(context)
    })
    // not in the quick profile: ~5 minutes of open-loop load
    if (profile.name !== 'quick' || args.some((a) => a.startsWith('--only=')))
      await section(
        'overload',
        '10. overload: goodput and critical traffic at 0.5x to 4x capacity, open loop',
        async () => {
          results.overload = await runOverload(context)
        },
      )
    const skipped = results.http
      .filter((r) => r.skip)
      .map((r) => `HTTP ${r.framework} ${r.variant}: ${r.skip.split('\n')[0]}`)
    const skippedTwoLimits = results.twoLimits
      .filter((r) => r.skip)
      .map((r) => `two limits ${r.id}: ${r.skip}`)
    const notes = [...checkResults(results), ...new Set(skipped), ...skippedTwoLimits]
    results.meta = {
      date: new Date().toISOString(),
      profile: profile.name,
      command: command(),
      machine: machine(),
      versions,
      reps: profile.reps,
      httpConnections: profile.http.connections,
      method:
        `closed loop in one Node process, ${profile.inFlight.join(' and ')} decisions in flight; medians of ${profile.reps} runs ` +
        `(${profile.redisRunMs} ms on Redis, ${profile.memoryRunMs} ms in memory, each after ${profile.warmupMs} ms warm-up), ` +
        `interleaved across contenders; HTTP: ${profile.http.reps} x ${profile.http.durationS} s per variant after ${profile.http.warmupS} s warm-up; ` +
        `our HTTP algorithm: ${httpAlgorithm ?? 'adapter default'}`,
      notes,
      elapsedS: (performance.now() - started) / 1000,
      sectionS,
    }
    const written = writeResults(results, outDir)
    if (results.decisions.length > 0) {
      const { inFlight, markdown } = headlineTable(results)
      log(`\nHeadline (Redis stores, ${inFlight} in flight):\n\n${markdown}\n`)
      for (const line of headlineLines(results)) log(line)
    }
    if (results.twoLimits.length > 0) {
      log('')
      for (const line of twoLimitsLines(results.twoLimits)) log(line)
    }
    if (results.concurrency.length > 0) {
      log('')
      for (const line of concurrencyLines(results.concurrency, results.outbound)) log(line)
    }
    if (results.waiters.length > 0) {
      log('')
      for (const line of waitersLines(results.waiters)) log(line)
    }
    if (results.clients.length > 0) {
      log('')
      for (const line of clientsLines(results.clients)) log(line)
    }
    if (results.events.length > 0) {
      log('')
      for (const line of eventsLines(results.events)) log(line)
    }
    if (results.overload) {
      log('')
      for (const line of overloadTargets(results.overload.rows)) log(line)
    }
    for (const note of notes) log(`note: ${note}`)
    log(
      `\nwrote ${written.map((p) => p.replace(/.*\/bench\//, 'bench/')).join(', ')} in ${Math.round(results.meta.elapsedS)} s`,
    )
  } finally {
    admin.disconnect()
    await redis.stop()
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
