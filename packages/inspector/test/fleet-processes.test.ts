// One fleet view from 4 processes: each runs an Express app with a limiter and the inspector on
// one private redis-server; after traffic to each, every process's JSON API shows the same top
// refused keys, the fleet's decisions per second (the sum of all four), and a block issued on
// one process listed (and refusing) on all four.
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { type RedisProcess, startRedis } from '../../../test-support/redis.js'
import type { InspectorState } from '../src/index.js'

const app = fileURLToPath(new URL('./fixtures/fleet-app.mjs', import.meta.url))
const admin = { 'x-user': 'admin' }
const name = `fleet-${Date.now()}`
let server: RedisProcess
const children: ChildProcess[] = []
const urls: string[] = []

function start(port: number): Promise<string> {
  const child = spawn(process.execPath, [app, String(port), name, `${name}:`], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  children.push(child)
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`fleet app exited with ${code}`)))
    createInterface({ input: child.stdout as NonNullable<typeof child.stdout> }).once(
      'line',
      (line) => resolve(`http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`),
    )
  })
}

beforeAll(async () => {
  if (!existsSync(fileURLToPath(new URL('../dist/index.mjs', import.meta.url))))
    throw new Error('the fleet test runs the built package: run `pnpm build` first')
  server = await startRedis()
  urls.push(...(await Promise.all([0, 1, 2, 3].map(() => start(server.port)))))
}, 60_000)

afterAll(async () => {
  for (const child of children)
    if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid)
  await server?.stop()
})

async function state(url: string): Promise<InspectorState> {
  const response = await fetch(`${url}/ops/api/state`, { headers: admin })
  expect(response.status).toBe(200)
  return (await response.json()) as InspectorState
}

async function hits(url: string, key: string, times: number): Promise<number[]> {
  const statuses: number[] = []
  for (let i = 0; i < times; i++) statuses.push((await fetch(`${url}/hit?key=${key}`)).status)
  return statuses
}

const total = (values: readonly number[] | undefined) =>
  Math.round((values ?? []).reduce((a, b) => a + b, 0) * 5) // 5 s points, per second

describe('4 processes on one Redis', () => {
  it('show one fleet: the same top refused keys and the sum of their decisions', async () => {
    // 'shared' 10 times on each (5 admitted fleet-wide, 35 refused); k<i> 6 + i times on process
    // i alone (5 admitted, 1 + i refused): 25 admitted and 45 refused in all
    await Promise.all(
      urls.map(async (url, i) => {
        await hits(url, 'shared', 10)
        await hits(url, `k${i}`, 6 + i)
      }),
    )
    const expected = [
      { key: 'shared', count: 35, error: 0 },
      { key: 'k3', count: 4, error: 0 },
      { key: 'k2', count: 3, error: 0 },
      { key: 'k1', count: 2, error: 0 },
      { key: 'k0', count: 1, error: 0 },
    ]
    // each process writes its own every 5 s and before it answers; all four agree once each has
    await vi.waitFor(
      async () => {
        const states = await Promise.all(urls.map(state))
        for (const s of states) {
          expect(s).toMatchObject({ merged: true, processes: 4 })
          const policy = s.policies[0]
          expect(policy?.top['15m']).toEqual(expected)
          expect(total(policy?.rates.allowed)).toBe(25)
          expect(total(policy?.rates.refused)).toBe(45)
        }
        // each keeps its own view too: process i saw 10 + 6 + i decisions
        states.forEach((s, i) => {
          const own = s.policies[0]?.ownRates
          expect(total(own?.allowed) + total(own?.refused)).toBe(16 + i)
        })
      },
      { timeout: 20_000, interval: 500 },
    )
  })

  it('lists a block issued on one process on every process, and every process refuses it', async () => {
    const first = urls[0] as string
    expect(await hits(first, 'victim', 1)).toEqual([200])
    const page = await fetch(`${first}/ops/`, { headers: admin })
    const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0] as string
    const token = /name="csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? ''
    const blocked = await fetch(`${first}/ops/api/block`, {
      method: 'POST',
      headers: { ...admin, cookie, 'x-csrf-token': token, 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'victim', duration: '10m' }),
    })
    expect(blocked.status).toBe(200)
    await vi.waitFor(
      async () => {
        for (const url of urls) {
          const { blocks } = await state(url)
          expect(blocks.map((b) => [b.limiter, b.key, b.kind])).toEqual([[name, 'victim', 'block']])
          expect(blocks[0]?.untilMs).toBeGreaterThan(Date.now() + 9 * 60_000)
        }
      },
      { timeout: 10_000, interval: 200 },
    )
    for (const url of urls) expect(await hits(url, 'victim', 1)).toEqual([429])
  })
})
