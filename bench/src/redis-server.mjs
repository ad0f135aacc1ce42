// A private redis-server for one bench run: a free port on 127.0.0.1, no persistence, stopped by pid.
// (Mirrors test-support/redis.ts, which is TypeScript and so not importable from plain Node 20.)
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createConnection, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

function ping(port) {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port })
    let reply = ''
    socket.setTimeout(500, () => socket.destroy())
    socket.on('connect', () => socket.write('PING\r\n'))
    socket.on('data', (chunk) => {
      reply += chunk
      if (reply.includes('\r\n')) socket.end()
    })
    socket.on('close', () => resolve(reply.startsWith('+PONG')))
    socket.on('error', () => {})
  })
}

/**
 * Starts redis-server on a free port of 127.0.0.1 with no persistence and returns
 * `{ port, pid, stop() }`. `stop` sends SIGTERM to that pid (SIGKILL after 2 s).
 */
export async function startRedis() {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'limiter-bench-redis-'))
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
    ],
    { stdio: 'ignore' },
  )
  const failed = new Promise((_, reject) => {
    child.once('error', (error) => reject(new Error(`cannot start redis-server: ${error.message}`)))
  })
  const deadline = Date.now() + 10_000
  for (;;) {
    const up = await Promise.race([ping(port), failed])
    if (up) break
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`redis-server on port ${port} did not answer PING within 10 s`)
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  const stop = () =>
    new Promise((resolve) => {
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
      child.kill('SIGTERM')
    })
  return { port, pid: child.pid, stop }
}
