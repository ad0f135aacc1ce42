// The test support itself: a redis-server that never answers PING is stopped, not leaked (three
// servers started with requirepass outlived their test runs before this was fixed); one whose
// port another process took first is not mistaken for that process.
import { spawn } from 'node:child_process'
import { connect, createServer } from 'node:net'
import { describe, expect, it } from 'vitest'
import { startRedis } from '../../../test-support/redis.js'
import { waitForPing } from '../../../test-support/redis-server.mjs'

const refused = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(false)
    })
    socket.once('error', () => resolve(true))
  })

describe('startRedis', () => {
  it('stops a server that never answers PING', async () => {
    const failure = await startRedis(['--requirepass', 'sesame']).catch((error: Error) => error)
    expect(failure).toBeInstanceOf(Error)
    const port = Number(/port (\d+)/.exec((failure as Error).message)?.[1])
    expect(port).toBeGreaterThan(0)
    expect(await refused(port)).toBe(true)
  }, 20_000)

  it('a server that cannot bind its port is not taken for what answers there', async () => {
    // something else took the port first and answers like a Redis; the child cannot bind it
    const squatter = createServer((socket) => socket.on('data', () => socket.write('+PONG\r\n')))
    await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve))
    const { port } = squatter.address() as { port: number }
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']
    const child = spawn('redis-server', args, { stdio: 'ignore' })
    try {
      const failure = await waitForPing(port, 10_000, child).catch((error: Error) => error)
      expect(failure).toBeInstanceOf(Error)
      expect(failure).toMatchObject({ exited: true })
    } finally {
      child.kill('SIGKILL')
      squatter.close()
    }
  }, 20_000)
})
