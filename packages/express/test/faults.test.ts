// Redis faults under steady load, through a real Express server in a child process (so the load
// generator runs apart from it): Redis frozen (SIGSTOP) for 3 s, then killed and restarted on its
// port, and SCRIPT FLUSH every 100 ms. Every request is answered by the deadline plus 50 ms (idle;
// on a busy machine the 50 ms grow with the measured event-loop delay, see test-support/load.ts),
// the answers follow failureMode, nothing goes unhandled, nothing is logged, and Redis decides
// again within 2 s. The table printed at the end is the one the issue asks for.
import { type ChildProcess, fork } from 'node:child_process'
import { existsSync } from 'node:fs'
import { Agent, request as httpRequest } from 'node:http'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type Load, watchLoad } from '../../../test-support/load.js'
import { type RedisProcess, startRedis } from '../../../test-support/redis.js'

const FIXTURE = fileURLToPath(new URL('./fixtures/fault-server.mjs', import.meta.url))
const TIMEOUT_MS = 200
const MARGIN_MS = 50
const RATE_PER_S = 300
/** The least rate a busy machine brings it down to (see rateFor). */
const MIN_RATE_PER_S = 50
/** The factor's cap: the margin stays under 1 s, below the 2-3 s a request waits without a deadline. */
const LOAD_CAP = 18

beforeAll(() => {
  if (!existsSync(fileURLToPath(new URL('../dist/index.mjs', import.meta.url)))) {
    throw new Error(
      'the fault tests run the built package: run `pnpm build` first (`pnpm test` does)',
    )
  }
})

const started: Array<{ stop(): Promise<void> }> = []
afterEach(async () => {
  // Stop what this file started, by handle, even when a test failed half-way.
  for (const s of started.splice(0).reverse()) await s.stop()
})

interface ChildStats {
  readonly unhandled: string[]
  readonly errors: Record<string, number>
  readonly served: number
  /** The slowest response the server wrote, from the request's arrival to its last byte. */
  readonly worstMs: number
  /** The child's longest event-loop stall since the load started. */
  readonly stallMs: number
}

interface App {
  readonly child: ChildProcess
  readonly url: string
  /** Lines the child wrote to stdout or stderr. */
  readonly output: string[]
  /** Requests sent before the load, to warm the child up (JIT, first script load). */
  readonly warmUps: number
  send(message: 'reset' | 'stats'): void
  stats(): Promise<ChildStats>
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const timer = setTimeout(() => child.kill('SIGKILL'), 2000)
    child.once('exit', () => {
      clearTimeout(timer)
      resolve()
    })
    child.kill('SIGTERM')
  })
}

async function startApp(
  redisPort: number,
  failureMode: 'open' | 'closed',
  timeoutMs = TIMEOUT_MS,
): Promise<App> {
  const child = fork(FIXTURE, [], {
    env: {
      ...process.env,
      REDIS_PORT: String(redisPort),
      FAILURE_MODE: failureMode,
      TIMEOUT_MS: String(timeoutMs),
    },
    silent: true,
  })
  started.push({ stop: () => stopChild(child) })
  const output: string[] = []
  const collect = (chunk: Buffer) => output.push(...chunk.toString().split('\n').filter(Boolean))
  child.stdout?.on('data', collect)
  child.stderr?.on('data', collect)
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve(m.port))
    child.once('exit', (code) => reject(new Error(`fault server exited (${code}): ${output}`)))
  })
  const url = `http://127.0.0.1:${port}`
  const warmUps = 100
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      for (let i = 0; i < warmUps / 10; i++) await (await fetch(`${url}/`)).arrayBuffer()
    }),
  )
  return {
    child,
    url,
    output,
    warmUps,
    send: (message) => child.send(message),
    stats: () =>
      new Promise<ChildStats>((resolve) => {
        const onMessage = (m: { stats?: ChildStats }) => {
          if (m.stats === undefined) return
          child.off('message', onMessage)
          resolve(m.stats)
        }
        child.on('message', onMessage)
        child.send('stats')
      }),
  }
}

/** One request of the load: when it was sent (ms since the load started), and how it ended. */
interface Shot {
  readonly atMs: number
  ms: number
  status: number
  /** Whether Redis made the decision (false: the failure policy did; undefined: no JSON body). */
  redis: boolean | undefined
  retryAfter: string | undefined
  error: string | undefined
}

/**
 * Sends GET / at a steady rate until `stop()`, which resolves once every request is answered.
 * Also measures this process's own event-loop stalls, which delay reading answers.
 */
function startLoad(url: string, perSecond: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY })
  const lag = monitorEventLoopDelay({ resolution: 10 })
  lag.enable()
  const shots: Shot[] = []
  const pending = new Set<Promise<void>>()
  const t0 = performance.now()
  const send = () => {
    const shot: Shot = {
      atMs: performance.now() - t0,
      ms: 0,
      status: 0,
      redis: undefined,
      retryAfter: undefined,
      error: undefined,
    }
    shots.push(shot)
    const done = new Promise<void>((resolve) => {
      const finish = (error?: Error) => {
        shot.ms = performance.now() - t0 - shot.atMs
        if (error !== undefined) shot.error = error.message
        resolve()
      }
      const req = httpRequest(`${url}/`, { agent, timeout: 5000 }, (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          body += chunk
        })
        res.on('end', () => {
          shot.status = res.statusCode ?? 0
          shot.retryAfter = res.headers['retry-after']
          try {
            shot.redis = (JSON.parse(body) as { redis?: boolean }).redis
          } catch {
            shot.redis = undefined
          }
          finish()
        })
        res.on('error', finish)
      })
      req.on('timeout', () => req.destroy(new Error('no answer within 5 s')))
      req.on('error', finish)
      req.end()
    })
    pending.add(done)
    void done.then(() => pending.delete(done))
  }
  let sent = 0
  const timer = setInterval(() => {
    // Catch up on what timer jitter delayed, so the rate holds on a loaded machine.
    const due = Math.floor(((performance.now() - t0) / 1000) * perSecond)
    while (sent < due) {
      send()
      sent++
    }
  }, 5)
  return {
    nowMs: () => performance.now() - t0,
    async stop() {
      clearInterval(timer)
      while (pending.size > 0) await Promise.all(pending)
      agent.destroy()
      lag.disable()
      return { shots, stallMs: Math.max(0, lag.max / 1e6 - 10) }
    },
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** One line of the report. */
interface FaultRow {
  readonly mode: string
  readonly fault: string
  readonly requests: number
  readonly fromFailurePolicy: number
  readonly worstMs: number
  readonly lost: number
  /** From the end of the fault to the first request after which Redis decided every request. */
  readonly recoverMs: number | undefined
}

const rows: FaultRow[] = []
const notes: string[] = []

/** Summarizes the shots sent from `fromMs` to `toMs`; the fault ended at `faultEndMs`. */
function summarize(
  mode: string,
  fault: string,
  shots: readonly Shot[],
  fromMs: number,
  toMs: number,
  faultEndMs?: number,
): FaultRow {
  const window = shots.filter((s) => s.atMs >= fromMs && s.atMs < toMs)
  let lastFailure = -1
  window.forEach((s, i) => {
    if (s.redis !== true) lastFailure = i
  })
  const firstGood = window[lastFailure + 1]
  const recoverMs =
    faultEndMs === undefined || lastFailure < 0
      ? 0
      : firstGood === undefined
        ? undefined
        : Math.round(Math.max(0, firstGood.atMs - faultEndMs))
  return {
    mode,
    fault,
    requests: window.length,
    fromFailurePolicy: window.filter((s) => s.redis !== true).length,
    worstMs: Math.round(Math.max(0, ...window.map((s) => s.ms))),
    lost: window.filter((s) => s.error !== undefined || ![200, 503].includes(s.status)).length,
    recoverMs,
  }
}

afterAll(() => {
  const lines = rows.map(
    (r) =>
      `| ${r.mode} | ${r.fault} | ${r.requests} | ${r.fromFailurePolicy} | ${r.worstMs} ms | ${r.lost} | ${r.recoverMs === undefined ? 'never' : `${r.recoverMs} ms`} |`,
  )
  console.log(
    [
      '',
      `Redis faults under ${RATE_PER_S} req/s (less on a busy machine: see each note) through Express (timeout ${TIMEOUT_MS} ms, default ioredis client)`,
      '| failureMode | fault | requests | answered by failureMode | worst latency | lost | time to recover |',
      '|---|---|---|---|---|---|---|',
      ...lines,
      ...notes,
    ].join('\n'),
  )
})

/**
 * The bound on every answer: the deadline plus 50 ms (scaled by the load: see boundOf), plus the
 * longest event-loop stall either process suffered (on a busy machine the OS may not run a
 * process for a while; no deadline can answer during that time). Both stalls are reported next
 * to the table.
 */
function expectAnswers(mode: 'open' | 'closed', shots: readonly Shot[], boundMs: number): void {
  for (const s of shots) {
    const at = `request sent at ${Math.round(s.atMs)} ms`
    expect(s.error, at).toBeUndefined()
    expect(s.ms, at).toBeLessThanOrEqual(boundMs)
    if (s.redis === true) {
      expect(s.status, at).toBe(200)
    } else if (mode === 'open') {
      // Allowed by the failure policy: 200, and the app can tell (failureOf(req.rateLimit)).
      expect(s.status, at).toBe(200)
      expect(s.redis, at).toBe(false)
    } else {
      // Denied by the failure policy: 503 (the server's fault, not the client's), Retry-After.
      expect(s.status, at).toBe(503)
      expect(Number(s.retryAfter), at).toBeGreaterThanOrEqual(1)
    }
  }
}

/**
 * The deadline plus MARGIN_MS, the margin multiplied by the load factor (1 idle: the original
 * 250 ms; at most LOAD_CAP, so the bound stays under the 2-3 s that a request waits for Redis
 * when the deadline does not fire), plus the event-loop stalls measured during the load.
 */
function boundOf(load: Load, stallsMs: number): number {
  return load.budget(TIMEOUT_MS, MARGIN_MS) + stallsMs
}

/**
 * The request rate: RATE_PER_S on an idle machine, divided by the load factor on a busy one (not
 * below MIN_RATE_PER_S). A server process that the OS runs a fraction of the time cannot answer
 * 300 requests a second: they queue in the kernel and time out (hundreds "lost" at load 27 on 2
 * cores), which says nothing about the limiter. The claims stay the same at any rate.
 */
function rateFor(load: Load): number {
  return Math.max(MIN_RATE_PER_S, Math.round(RATE_PER_S / load.factor()))
}

/** Five requests on a fresh id of /tight (3 per minute): Redis decides them, and limits. */
async function expectTightLimit(app: App, port: number, id: string): Promise<void> {
  const statuses: number[] = []
  for (let i = 0; i < 5; i++) {
    const res = await fetch(`${app.url}/tight/${id}`)
    statuses.push(res.status)
    if (res.status === 200) expect(((await res.json()) as { redis: boolean }).redis).toBe(true)
    else await res.arrayBuffer()
  }
  expect(statuses).toEqual([200, 200, 200, 429, 429])
  const redis = new Redis(port, '127.0.0.1')
  try {
    const [, keys] = await redis.scan('0', 'MATCH', `*#${id}}`, 'COUNT', 1000)
    expect(keys).toHaveLength(1)
  } finally {
    redis.disconnect()
  }
}

describe.each(['open', 'closed'] as const)(`failureMode '%s' under ${RATE_PER_S} req/s`, (mode) => {
  it('Redis frozen for 3 s, then killed and restarted: every request answered in time, per failureMode; Redis decides again within 2 s', async () => {
    let redisServer: RedisProcess = await startRedis()
    started.push({ stop: () => redisServer.stop() })
    const port = redisServer.port
    const app = await startApp(port, mode)
    app.send('reset')
    const loadNow = await watchLoad({ cap: LOAD_CAP })
    const rate = rateFor(loadNow)
    // 2 s idle (1.5 s + 0.5 s scaled), at most 6 s: a limiter that never recovers still fails
    const recoveryMs = Math.min(6000, loadNow.budget(1500, 500))
    const load = startLoad(app.url, rate)

    await sleep(1000)
    const stopAt = load.nowMs()
    redisServer.process.kill('SIGSTOP')
    await sleep(3000)
    redisServer.process.kill('SIGCONT')
    const contAt = load.nowMs()
    await sleep(2500)
    const killAt = load.nowMs()
    redisServer.process.kill('SIGKILL')
    await new Promise((r) => redisServer.process.once('exit', r))
    await sleep(2000)
    redisServer = await startRedis([], port)
    const restartedAt = load.nowMs()
    await sleep(Math.max(2500, recoveryMs + 500))
    const endAt = load.nowMs()
    const { shots, stallMs } = await load.stop()
    const stats = await app.stats()
    await expectTightLimit(app, port, `after-${mode}`)

    // Requests in flight when Redis is killed fail because of the kill: they count with it.
    const edge = killAt - TIMEOUT_MS - MARGIN_MS
    const before = summarize(mode, 'none (1 s before the faults)', shots, 0, stopAt)
    const frozen = summarize(mode, 'SIGSTOP 3 s, then SIGCONT', shots, stopAt, edge, contAt)
    const killed = summarize(mode, 'SIGKILL, restart 2 s later', shots, edge, endAt, restartedAt)
    rows.push(before, frozen, killed)
    const boundMs = boundOf(loadNow, stats.stallMs + stallMs)
    const serverBoundMs = boundOf(loadNow, stats.stallMs)
    loadNow.stop()
    notes.push(
      `'${mode}' at ${rate} req/s: slowest response written by the server ${Math.round(stats.worstMs)} ms; longest event-loop stall: server ${Math.round(stats.stallMs)} ms, load generator ${Math.round(stallMs)} ms; store errors reported ${JSON.stringify(stats.errors)}; ${loadNow.describe(TIMEOUT_MS, MARGIN_MS)}`,
    )

    expect(app.child.exitCode).toBeNull() // no crash
    expect(stats.unhandled).toEqual([])
    expect(app.output).toEqual([]) // nothing logged, let alone a line per reconnect
    expect(shots.length).toBeGreaterThan(rate * 10)
    expect(stats.served).toBe(app.warmUps + shots.length) // every request answered, once
    expectAnswers(mode, shots, boundMs)
    expect(stats.worstMs, loadNow.describe(TIMEOUT_MS, MARGIN_MS)).toBeLessThanOrEqual(
      serverBoundMs,
    )
    for (const row of [frozen, killed]) {
      expect(row.lost).toBe(0)
      expect(row.fromFailurePolicy).toBeGreaterThan(0) // the fault was felt...
      expect(row.recoverMs).toBeLessThanOrEqual(recoveryMs) // ...and Redis decides again
    }
    // Every failure reached onError (the breaker's skipped calls are not new failures).
    expect(stats.errors.ERR_LIMITER_TIMEOUT).toBeGreaterThan(0)
    expect(stats.errors.ERR_LIMITER_STORE).toBeGreaterThan(0)
  }, 60_000)
})

describe('SCRIPT FLUSH every 100 ms', () => {
  it(`under ${RATE_PER_S} req/s: zero errors, every decision made by Redis`, async () => {
    const redisServer = await startRedis()
    started.push({ stop: () => redisServer.stop() })
    // Every decision must come from Redis: a correctness claim, so the deadline is one a busy
    // machine cannot reach (a NOSCRIPT that is not answered by one EVAL still fails at once).
    const app = await startApp(redisServer.port, 'closed', 5000)
    const flusher = new Redis(redisServer.port, '127.0.0.1')
    started.push({ stop: async () => flusher.disconnect() })
    app.send('reset')
    const loadNow = await watchLoad({ cap: LOAD_CAP })
    const rate = rateFor(loadNow)
    const load = startLoad(app.url, rate)
    let flushes = 0
    const timer = setInterval(() => {
      flushes++
      void flusher.script('FLUSH')
    }, 100)
    await sleep(3000)
    clearInterval(timer)
    const { shots, stallMs } = await load.stop()
    const stats = await app.stats()

    const row = summarize(
      'closed',
      `SCRIPT FLUSH every 100 ms for 3 s, ${rate} req/s`,
      shots,
      0,
      Infinity,
    )
    rows.push(row)
    // scripts were flushed many times over (a busy machine fires the 100 ms timer less often)
    expect(flushes).toBeGreaterThanOrEqual(10)
    expect(stats.errors).toEqual({})
    expect(stats.unhandled).toEqual([])
    expect(app.output).toEqual([])
    expect(row.lost).toBe(0)
    expect(row.fromFailurePolicy).toBe(0)
    expectAnswers('closed', shots, boundOf(loadNow, stats.stallMs + stallMs))
    loadNow.stop()
  }, 30_000)
})
