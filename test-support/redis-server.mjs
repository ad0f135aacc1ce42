// A private redis-server on a free port of 127.0.0.1 with no persistence, for the tests
// (test-support/redis.ts builds Clusters and Sentinels on it) and the benchmarks (bench/src).
// Plain JavaScript so that both TypeScript tests and plain Node 20 scripts import it; its types
// are in redis-server.d.mts.
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createConnection, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Throws, saying what to install, when `name` is not on PATH. */
export function requireBinary(name) {
  try {
    execFileSync(name, ['--version'], { stdio: 'ignore' })
  } catch {
    throw new Error(
      `${name} not found on PATH: the tests start their own Redis processes (install the redis-server package)`,
    )
  }
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

/** Whether a server on `port` answers PING with PONG (false while it starts, or if it refuses). */
function ping(port) {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port })
    let reply = ''
    socket.setTimeout(1000, () => socket.destroy())
    socket.on('connect', () => socket.write('PING\r\n'))
    socket.on('data', (chunk) => {
      reply += chunk
      if (reply.includes('\r\n')) socket.end()
    })
    socket.on('close', () => resolve(reply.startsWith('+PONG')))
    socket.on('error', () => {})
  })
}

/** Resolves once the server on `port` answers PING; rejects after `timeoutMs`, or if `child` fails to spawn. */
export async function waitForPing(port, timeoutMs, child) {
  const failed = new Promise((_, reject) => {
    child?.once('error', (error) =>
      reject(new Error(`cannot start redis-server: ${error.message}`)),
    )
  })
  const deadline = Date.now() + timeoutMs
  while (!(await Promise.race([ping(port), failed]))) {
    if (Date.now() > deadline)
      throw new Error(`redis-server on port ${port} did not start within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** Stops `child` (SIGCONT, SIGTERM, SIGKILL after 2 s) and removes `dir`. */
export function stopProcess(child, dir) {
  return new Promise((resolve) => {
    const done = () => {
      rmSync(dir, { recursive: true, force: true })
      resolve()
    }
    if (child.exitCode !== null || child.signalCode !== null) return done()
    const timer = setTimeout(() => child.kill('SIGKILL'), 2000)
    child.once('exit', () => {
      clearTimeout(timer)
      done()
    })
    child.kill('SIGCONT')
    child.kill('SIGTERM')
  })
}

/** Starts a redis-server on a free port (or `fixedPort`) with no persistence; `extraArgs` are passed through. */
export async function startRedis(extraArgs = [], fixedPort) {
  requireBinary('redis-server')
  const port = fixedPort ?? (await freePort())
  const dir = mkdtempSync(join(tmpdir(), 'limiter-redis-'))
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']
  const child = spawn('redis-server', [...args, '--dir', dir, ...extraArgs], { stdio: 'ignore' })
  child.unref()
  try {
    await waitForPing(port, 10_000, child)
  } catch (error) {
    // A server that never answered PING (say, one started with requirepass) must not outlive
    // the caller that started it.
    await stopProcess(child, dir)
    throw error
  }
  return redisProcess(port, child, dir)
}

/** The record of a redis-server `child` started on `port` in `dir`: stop() stops it and removes `dir`. */
export function redisProcess(port, child, dir) {
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    process: child,
    pid: child.pid,
    dir,
    stop: () => stopProcess(child, dir),
  }
}
