// The example app built and served by Next.js itself (`next build`, then `next start` on a free
// port, child processes killed by pid): a route handler behind withRateLimit and a proxy.ts
// limit, each keyed per client by the right-most X-Forwarded-For entry (trustProxy: 1).
import { type ChildProcess, spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const app = join(dirname(fileURLToPath(import.meta.url)), '..')
const nextBin = join(
  dirname(createRequire(import.meta.url).resolve('next/package.json')),
  'dist/bin/next',
)
// no telemetry, no update check: the build and the server reach no network
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1', NODE_ENV: 'production' }

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

// `node next <args>`, its output kept for the failure message, killed after `ms`.
function next(args: string[], ms: number): { child: ChildProcess; done: Promise<string> } {
  const child = spawn(process.execPath, [nextBin, ...args], { cwd: app, env, stdio: 'pipe' })
  let output = ''
  child.stdout?.on('data', (chunk) => {
    output += chunk
  })
  child.stderr?.on('data', (chunk) => {
    output += chunk
  })
  const timer = setTimeout(() => child.kill('SIGKILL'), ms)
  const done = new Promise<string>((resolve, reject) => {
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      if (code === 0) resolve(output)
      else reject(new Error(`next ${args[0]}: ${code ?? signal}\n${output}`))
    })
  })
  done.catch(() => {})
  return { child, done }
}

let server: ChildProcess | undefined
let base = ''

beforeAll(async () => {
  await next(['build'], 240_000).done
  const port = await freePort()
  const started = next(['start', '-p', String(port), '-H', '127.0.0.1'], 200_000)
  server = started.child
  base = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 60_000
  for (;;) {
    const up = await fetch(`${base}/`).then(
      (r) => r.ok,
      () => false,
    )
    if (up) break
    if (Date.now() > deadline || server.exitCode !== null)
      throw new Error(`next start did not come up: ${await started.done.catch(String)}`)
    await new Promise((r) => setTimeout(r, 200))
  }
})

afterAll(() => {
  if (server?.pid !== undefined && server.exitCode === null) server.kill('SIGTERM')
})

const from = (xff: string) => ({ headers: { 'x-forwarded-for': xff } })

describe('examples/next on next start', () => {
  it('a route handler under withRateLimit: 3 a minute per client, then 429 with our headers', async () => {
    const ok: number[] = []
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${base}/api/hello?name=a`, from('203.0.113.1'))
      ok.push(res.status)
      expect(res.headers.get('ratelimit')).toMatch(new RegExp(`^"gc3/1m";r=${2 - i};t=\\d+$`))
      expect(await res.json()).toEqual({ hello: 'a' })
    }
    expect(ok).toEqual([200, 200, 200])
    const refused = await fetch(`${base}/api/hello`, from('203.0.113.1'))
    expect(refused.status).toBe(429)
    expect(refused.headers.get('content-type')).toBe('application/problem+json')
    expect(refused.headers.get('ratelimit-policy')).toBe('"gc3/1m";q=3;w=60')
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await refused.json()).status).toBe(429)
    // another client has its own budget
    const other = await fetch(`${base}/api/hello`, from('203.0.113.2'))
    expect(other.status).toBe(200)
    expect(other.headers.get('ratelimit')).toMatch(/^"gc3\/1m";r=2;/)
  })

  it('proxy.ts limits /api/limited: 2 a minute per client', async () => {
    const statuses: number[] = []
    for (let i = 0; i < 3; i++)
      statuses.push((await fetch(`${base}/api/limited`, from('198.51.100.1'))).status)
    expect(statuses).toEqual([200, 200, 429])
    const other = await fetch(`${base}/api/limited/deeper`, from('198.51.100.2'))
    // past the proxy, Next answers 404 (no such route): the proxy counted it and let it through
    expect(other.status).toBe(404)
    expect(other.headers.get('ratelimit')).toMatch(/^"gc2\/1m";r=1;/)
    const limited = await fetch(`${base}/api/limited`, from('198.51.100.1'))
    expect(limited.status).toBe(429)
    expect(limited.headers.get('retry-after')).not.toBeNull()
  })

  it('keys by the right-most entry: a left-most address a client sets gets no fresh budget', async () => {
    // behind one proxy that appends what it saw, the client controls only the left part
    const statuses: number[] = []
    for (const spoof of ['192.0.2.1', '192.0.2.2', '192.0.2.3', '192.0.2.4'])
      statuses.push((await fetch(`${base}/api/hello`, from(`${spoof}, 203.0.113.9`))).status)
    expect(statuses).toEqual([200, 200, 200, 429])
  })

  it('with no X-Forwarded-For, Next fills it with the socket address: still one budget per client', async () => {
    const first = await fetch(`${base}/api/hello`)
    expect(first.status).toBe(200)
    expect(first.headers.get('ratelimit')).toMatch(/^"gc3\/1m";r=2;/)
    // the same address (127.0.0.1) named explicitly shares that budget
    const again = await fetch(`${base}/api/hello`, from('127.0.0.1'))
    expect(again.headers.get('ratelimit')).toMatch(/^"gc3\/1m";r=1;/)
  })
})
