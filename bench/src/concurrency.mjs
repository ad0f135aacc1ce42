// Section 6: concurrency limits and outbound throttling. Decisions/s and CPU of a slot taken and
// given back per request (ours against a hand-written INCR/DECR pair), then the outbound example
// run as is: the rate a partner API's quota is used at, and the 429s it answers.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { CONCURRENCY, OUTBOUND } from './config.mjs'
import { CONCURRENCY_CONTENDERS } from './contenders/concurrency.mjs'
import { measurePlan, summarize } from './decisions.mjs'

const run = promisify(execFile)
const EXAMPLE = fileURLToPath(new URL('../../examples/outbound/run.mjs', import.meta.url))

/** Runs each available contender `profile.reps` times, interleaved. One row per contender. */
export async function runConcurrency(context) {
  const plan = await measurePlan(CONCURRENCY_CONTENDERS, CONCURRENCY, context)
  return plan.map(({ contender, skip, runs }) => ({
    id: contender.id,
    owner: contender.owner,
    label: contender.label,
    store: contender.store,
    scenario: CONCURRENCY.id,
    inFlight: CONCURRENCY.inFlight,
    ...(skip ? { skip } : summarize(runs)),
  }))
}

/** Runs examples/outbound against the bench's Redis; its RESULT line, or why it failed. */
export async function runOutbound({ port, log }) {
  // It exits 1 on a 429 or a low rate: its RESULT line says what happened either way.
  const stdout = await run(process.execPath, [EXAMPLE], {
    env: {
      ...process.env,
      REDIS_URL: `redis://127.0.0.1:${port}`,
      SECONDS: String(OUTBOUND.seconds),
      QUOTA: String(OUTBOUND.quota),
    },
    timeout: 60_000,
  }).then(
    (done) => done.stdout,
    (error) => String(error?.stdout ?? ''),
  )
  const line = stdout.split('\n').find((l) => l.startsWith('RESULT '))
  if (line === undefined) {
    const why = stdout.trim().split('\n').at(-1) || 'no RESULT line'
    log(`  outbound example failed: ${why}`)
    return { ...OUTBOUND, error: why }
  }
  const result = { ...OUTBOUND, ...JSON.parse(line.slice('RESULT '.length)) }
  log(
    `  outbound example: ${result.served} calls served, ${result.refused} refused (429), ${result.rate.toFixed(1)}/s of ${result.quota}/s = ${(result.used * 100).toFixed(1)}% of the quota`,
  )
  return result
}
