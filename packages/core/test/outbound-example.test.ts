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

it('4 workers x 8 callers against a 100/s API, with a margin: no 429', async () => {
  // The README's runs give the limiter 95% of the quota. Beside a test suite on 2 cores the
  // workers' timers and replies jitter by tens of ms, so this run leaves it a 20% margin: what
  // it asserts is that the API refuses nothing, and that the share is used in good part.
  const { stdout } = await run(process.execPath, [example], {
    env: {
      ...process.env,
      REDIS_URL: `redis://127.0.0.1:${redis.server.port}`,
      SECONDS: '3',
      SHARE: '0.8',
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
  expect(result.served).toBeGreaterThan(100)
  expect(result.used).toBeGreaterThanOrEqual(0.6)
}, 40_000)
