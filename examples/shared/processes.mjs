// Shared by the examples: a private redis-server on a free port of 127.0.0.1 (no persistence),
// and stopping every process an example started, by pid. Examples import it by relative path.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

export const children = new Set() // every process this script started, stopped by pid at the end
const dirs = new Set() // and every directory it made

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

// Whether a Redis answers PING on `port` (plain RESP over TCP: no client library needed).
function pong(port) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    const done = (ok) => {
      socket.destroy()
      resolve(ok)
    }
    socket.once('error', () => done(false))
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')))
    socket.once('connect', () => socket.write('PING\r\n'))
  })
}

export async function startRedis() {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'limiter-example-redis-'))
  dirs.add(dir)
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']
  const child = spawn('redis-server', [...args, '--dir', dir], { stdio: 'ignore' })
  children.add(child)
  const failed = once(child, 'error').then(([error]) => {
    throw error.code === 'ENOENT'
      ? new Error('redis-server is not on PATH: install it, or set REDIS_URL to a Redis to use')
      : error
  })
  const url = `redis://127.0.0.1:${port}`
  const ready = (async () => {
    for (let i = 0; i < 100; i++) {
      if (await pong(port)) return
      await sleep(50)
    }
    throw new Error(`redis-server on port ${port} did not start within 5 s`)
  })()
  await Promise.race([ready, failed])
  return url
}

export async function stopAll() {
  await Promise.all(
    [...children].map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = once(child, 'exit')
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 2000)
      await exited
      clearTimeout(timer)
    }),
  )
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
}
