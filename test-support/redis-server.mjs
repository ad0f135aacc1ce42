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

/**
 * Sends `command` to `port` and resolves with what came back once `complete(reply)` says it is
 * all there, the server closed, or a second passed ('' when nothing answers).
 */
function exchange(port, command, complete) {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port })
    let reply = ''
    socket.setTimeout(1000, () => socket.destroy())
    socket.on('connect', () => socket.write(`${command}\r\n`))
    socket.on('data', (chunk) => {
      reply += chunk
      if (complete(reply)) socket.end()
    })
    socket.on('close', () => resolve(reply))
    socket.on('error', () => {})
  })
}

/** Whether a server on `port` answers PING with PONG (false while it starts, or if it refuses). */
async function ping(port) {
  const reply = await exchange(port, 'PING', (text) => text.includes('\r\n'))
  return reply.startsWith('+PONG')
}

/** The process id of the Redis server on `port` (INFO server), or undefined if none tells it. */
async function serverPid(port) {
  const pid = /process_id:(\d+)\r\n/
  const reply = await exchange(
    port,
    'INFO server',
    (text) => pid.test(text) || text.startsWith('-'),
  )
  const match = pid.exec(reply)
  return match === null ? undefined : Number(match[1])
}

/**
 * Resolves once the server on `port` answers PING (and, given `child`, is that child: another
 * test's server may have taken a port found free a moment before); rejects after `timeoutMs`,
 * or if `child` fails to spawn or exits first (the error then has `exited: true`).
 */
export async function waitForPing(port, timeoutMs, child) {
  let onError
  let onExit
  const failed = new Promise((_, reject) => {
    onError = (error) => reject(new Error(`cannot start redis-server: ${error.message}`))
    onExit = (code, signal) =>
      reject(
        Object.assign(
          new Error(`redis-server on port ${port} exited (${signal ?? code}) before it answered`),
          { exited: true },
        ),
      )
    child?.once('error', onError)
    child?.once('exit', onExit)
  })
  failed.catch(() => {})
  const ours = async () =>
    (await ping(port)) && (child === undefined || (await serverPid(port)) === child.pid)
  const deadline = Date.now() + timeoutMs
  try {
    while (!(await Promise.race([ours(), failed]))) {
      if (Date.now() > deadline)
        throw new Error(`redis-server on port ${port} did not start within ${timeoutMs} ms`)
      await new Promise((r) => setTimeout(r, 50))
    }
  } finally {
    child?.off('error', onError)
    child?.off('exit', onExit)
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

/**
 * Starts a redis-server on a free port (or `fixedPort`) with no persistence; `extraArgs` are
 * passed through. A free port can be taken by another process before the server binds it: the
 * server then exits, and it is started again on another port (up to 3 tries).
 */
export async function startRedis(extraArgs = [], fixedPort) {
  requireBinary('redis-server')
  for (let attempt = 1; ; attempt++) {
    const port = fixedPort ?? (await freePort())
    const dir = mkdtempSync(join(tmpdir(), 'limiter-redis-'))
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']
    const child = spawn('redis-server', [...args, '--dir', dir, ...extraArgs], { stdio: 'ignore' })
    child.unref()
    try {
      await waitForPing(port, 10_000, child)
      return redisProcess(port, child, dir)
    } catch (error) {
      // A server that never answered PING (say, one started with requirepass) must not outlive
      // the caller that started it.
      await stopProcess(child, dir)
      if (fixedPort !== undefined || error?.exited !== true || attempt >= 3) throw error
    }
  }
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
