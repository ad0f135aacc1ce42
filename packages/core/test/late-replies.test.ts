// A store answer that comes after the deadline (Redis frozen, then resumed): failureMode answered
// the caller, so what the late answer took is given back. Before, a frozen Redis's queued
// consumes each took a concurrency lease when it resumed, and the key was refused for its whole
// window with nothing running (an outside review: 18.5 s of a 20 s window); under 'closed' the
// refused requests' rate counts stayed spent. Under 'open' the requests went ahead, and a late
// rate count stands. Decisions and counts only: polled, never timed.
import { describe, expect, it } from 'vitest'
import { eventually } from '../../../test-support/load.js'
import { startRedis } from '../../../test-support/redis.js'
import {
  createLimiter,
  type Decision,
  failureOf,
  type Limiter,
  type LimiterOptions,
  RedisStore,
} from '../src/index.js'
import { CLIENTS } from './setup/clients.js'

let unique = 0

// Three consumes while Redis is frozen (each answered by failureMode at the deadline), then the
// resumed Redis runs them; resolves with what a store-decided peek finally shows.
async function frozenThenPeek(
  limiter: Limiter,
  kill: (signal: NodeJS.Signals) => void,
  settled: (peek: Decision) => boolean,
): Promise<{ during: Decision[]; after: Decision | undefined }> {
  const key = `k${unique++}`
  expect(failureOf(await limiter.peek(key))).toBeUndefined()
  kill('SIGSTOP')
  let during: Decision[]
  try {
    during = await Promise.all([0, 1, 2].map(() => limiter.consume(key)))
  } finally {
    kill('SIGCONT')
  }
  // the circuit opened on those timeouts: peeks answer from failureMode until it closes
  const after = await eventually(async () => {
    const peek = await limiter.peek(key)
    return failureOf(peek) === undefined && settled(peek) ? peek : undefined
  }, 15_000)
  return { during, after }
}

const LEASES: Partial<LimiterOptions> = { algorithm: 'concurrency', limit: 3, window: '1m' }
const COUNTS: Partial<LimiterOptions> = { algorithm: 'fixed-window', limit: 3, window: '1m' }
const BOTH: Partial<LimiterOptions> = {
  limits: [
    { name: 'slots', algorithm: 'concurrency', limit: 3, window: '1m' },
    { name: 'rate', algorithm: 'fixed-window', limit: 5, window: '1m' },
  ],
}
const CASES: Array<[string, 'open' | 'closed', number, Partial<LimiterOptions>]> = [
  // [what, failureMode, remaining once the late answers are in, policy]
  ['concurrency leases', 'closed', 3, LEASES],
  ['concurrency leases', 'open', 3, LEASES],
  ['rate counts', 'closed', 3, COUNTS],
  ['rate counts', 'open', 0, COUNTS],
  ['leases and counts of several policies', 'closed', 3, BOTH],
]

describe.each(CLIENTS)('$name', (factory) => {
  it.each(CASES)(
    '%s, failureMode %s: %s remain after the late answers',
    async (_what, failureMode, remaining, policy) => {
      const server = await startRedis()
      const { client, close } = await factory.standalone(server.port)
      try {
        const limiter = createLimiter({
          ...policy,
          store: new RedisStore({ client }),
          timeout: 100,
          failureMode,
          onError: () => {},
          name: `late${unique++}`,
        } as LimiterOptions)
        const kill = (signal: NodeJS.Signals) => server.process.kill(signal)
        const { during, after } = await frozenThenPeek(
          limiter,
          kill,
          (peek) => peek.remaining === remaining,
        )
        expect(during.map((d) => failureOf(d)?.code)).toEqual(Array(3).fill('ERR_LIMITER_TIMEOUT'))
        expect(after?.remaining).toBe(remaining)
      } finally {
        await close()
        await server.stop()
      }
    },
  )
})
