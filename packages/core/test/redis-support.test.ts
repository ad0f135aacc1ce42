// The test support itself: a redis-server that never answers PING is stopped, not leaked (three
// servers started with requirepass outlived their test runs before this was fixed).
import { connect } from 'node:net'
import { describe, expect, it } from 'vitest'
import { startRedis } from '../../../test-support/redis.js'

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
})
