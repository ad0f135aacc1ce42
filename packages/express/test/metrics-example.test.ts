// examples/metrics, run as a user runs it: requests to its Express app move the limiter counters
// that Prometheus scrapes at /metrics, the shadow limiter's would-be limits included; on
// MemoryStore and on Redis.
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { useRedisServer } from '../../../test-support/adapter-helpers.js'

const server = fileURLToPath(new URL('../../../examples/metrics/server.mjs', import.meta.url))
const redis = useRedisServer((port) => new Redis(port, '127.0.0.1'))

/** Starts the example on a free port; resolves with its URL once it listens. */
async function startExample(env: Record<string, string>) {
  const child = spawn(process.execPath, [server], {
    env: { ...process.env, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`example did not start:\n${output}`)), 15_000)
    const read = (chunk: Buffer) => {
      output += chunk.toString()
      const found = /listening on (http:\/\/[\d.]+:\d+)/.exec(output)
      if (found) {
        clearTimeout(timer)
        resolve(found[1] as string)
      }
    }
    child.stdout.on('data', read)
    child.stderr.on('data', read)
    child.once('exit', (code) => reject(new Error(`example exited (${code}):\n${output}`)))
  })
  return { url, child, output: () => output }
}

async function stop(child: ChildProcess) {
  if (child.exitCode !== null) return
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  await exited
}

/** The samples of a Prometheus text exposition: `name{labels} value`. */
function parse(text: string) {
  const samples: Array<{ name: string; labels: Record<string, string>; value: number }> = []
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!m) continue
    const labels: Record<string, string> = {}
    for (const [, k, v] of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      labels[k as string] = v as string
    samples.push({ name: m[1] as string, labels, value: Number(m[3]) })
  }
  return samples
}

/** The value of the sample `name` whose labels include `match` (0 when there is none). */
function sample(text: string, name: string, match: Record<string, string>): number {
  const found = parse(text).filter(
    (s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v),
  )
  return found.reduce((sum, s) => sum + s.value, 0)
}

async function requests(url: string, count: number): Promise<number[]> {
  const statuses: number[] = []
  for (let i = 0; i < count; i++) statuses.push((await fetch(`${url}/api/items`)).status)
  return statuses
}

const decisions = (text: string, name: string, result: string, shadow = 'false') =>
  sample(text, 'limiter_decisions_total', {
    limiter_name: name,
    limiter_result: result,
    limiter_shadow: shadow,
  })

describe.each([
  ['MemoryStore', () => ({}), 'memory'],
  ['Redis', () => ({ REDIS_URL: `redis://127.0.0.1:${redis.server.port}` }), 'redis'],
])('examples/metrics on %s', (_name, env, store) => {
  it('scrapes counters that move with the traffic, would-be limits included', async () => {
    const app = await startExample(env())
    try {
      const before = await (await fetch(`${app.url}/metrics`)).text()
      expect(decisions(before, 'items', 'allowed')).toBe(0)

      // items allows 5 per 10 s; items-strict (shadow) would allow 3 but refuses nothing
      expect(await requests(app.url, 7)).toEqual([200, 200, 200, 200, 200, 429, 429])
      const first = await (await fetch(`${app.url}/metrics`)).text()
      expect(decisions(first, 'items', 'allowed')).toBe(5)
      expect(decisions(first, 'items', 'limited')).toBe(2)
      expect(decisions(first, 'items-strict', 'allowed', 'true')).toBe(3)
      expect(decisions(first, 'items-strict', 'limited', 'true')).toBe(4)
      expect(decisions(first, 'global', 'allowed')).toBe(7)
      expect(
        sample(first, 'limiter_decisions_total', { limiter_name: 'items', limiter_store: store }),
      ).toBe(7)

      // the counters move; scrapes are not counted
      await requests(app.url, 2)
      const second = await (await fetch(`${app.url}/metrics`)).text()
      expect(decisions(second, 'items', 'limited')).toBe(4)
      expect(decisions(second, 'items-strict', 'limited', 'true')).toBe(6)
      expect(decisions(second, 'global', 'allowed')).toBe(9)
      // store round trips are timed (a MemoryStore makes none): the global limiter's 9 on Redis
      const timed = sample(second, 'limiter_store_duration_count', { limiter_name: 'global' })
      expect(timed).toBe(store === 'redis' ? 9 : 0)
      expect(
        sample(second, 'limiter_store_duration_bucket', { limiter_name: 'global', le: '+Inf' }),
      ).toBe(timed)
    } finally {
      await stop(app.child)
    }
    expect(app.output()).not.toMatch(/Error|warn/i)
  })
})
