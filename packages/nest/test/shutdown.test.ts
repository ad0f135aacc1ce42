// app.close() waits for the releases in flight: an async handler on a concurrency limit, then
// `await app.close()` and the Redis client dropped right after the response leave no lease in
// Redis (it used to stay for the whole window, with a warning saying requests pass unlimited).
import { Controller, Get } from '@nestjs/common'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { freshPrefix, useRedisServer } from '../../../test-support/adapter-helpers.js'
import { IOREDIS, NODE_REDIS } from '../../core/test/setup/clients.js'
import { RateLimit } from '../src/index.js'
import { nestApp, PLATFORMS, sender } from './helpers.js'

const redis = useRedisServer((port) => new Redis(port, '127.0.0.1'))

@Controller()
class Slow {
  @Get('slow')
  @RateLimit({ algorithm: 'concurrency', limit: 2, window: '10s' })
  async slow() {
    await new Promise((resolve) => setTimeout(resolve, 20))
    return 'done'
  }
}

afterEach(() => {
  vi.restoreAllMocks()
})

describe.each([IOREDIS, ...NODE_REDIS])('on $name', (factory) => {
  it.each(PLATFORMS)(
    'app.close() waits for the lease to be released ($platform)',
    async (platform) => {
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
      const { client, close } = await factory.standalone(redis.server.port)
      const prefix = freshPrefix()
      const app = await nestApp(platform, { redis: client as never, prefix }, [Slow])
      const send = sender(platform, app)
      const responses = await Promise.all([send('/slow'), send('/slow')])
      expect(responses.map((r) => r.status)).toEqual([200, 200])
      // the usual shutdown, right after the responses
      await app.close()
      await close()
      expect(await redis.client.keys(`${prefix}*`)).toEqual([])
      expect(warn).not.toHaveBeenCalled()
    },
  )
})
