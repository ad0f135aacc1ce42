// examples/outbound, run as a user runs it: worker processes sharing a mock API's quota through
// one limiter on Redis get no 429 from it and use most of it.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'
import { useRedis } from './setup/redis.js'

const run = promisify(execFile)
const example = fileURLToPath(new URL('../../../examples/outbound/run.mjs', import.meta.url))
const redis = useRedis()

it('4 workers x 8 callers against a 100/s API: no 429, most of the quota used', async () => {
  // The README's run uses 96% of the quota; under a test suite running beside it the timers
  // jitter more, so this run leaves the limiter 8% of margin, and asks for 90% of the quota.
  const { stdout } = await run(process.execPath, [example], {
    env: {
      ...process.env,
      REDIS_URL: `redis://127.0.0.1:${redis.server.port}`,
      SECONDS: '3',
      SHARE: '0.92',
    },
    timeout: 30_000,
  })
  const line = stdout.split('\n').find((l) => l.startsWith('RESULT ')) as string
  const result = JSON.parse(line.slice('RESULT '.length)) as {
    served: number
    refused: number
    used: number
  }
  expect(result.refused).toBe(0)
  expect(result.served).toBeGreaterThan(250)
  expect(result.used).toBeGreaterThanOrEqual(0.9)
}, 40_000)
