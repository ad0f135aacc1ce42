// Property test: the guard on Nest's Express and Fastify platforms (a real listening server),
// with MemoryStore and with Redis, driven by random methods, paths, header values, key callback
// results and costs, against a model of the counters (see test-support/rate-limit-fuzz.ts).
import type { AddressInfo } from 'node:net'
import * as core from '@limiter/core'
import { All, Controller, Header } from '@nestjs/common'
import { Redis } from 'ioredis'
import { describe } from 'vitest'
import { useRedis } from '../../../test-support/adapter-helpers.js'
import {
  describeFuzzContract,
  fuzzStores,
  httpSender,
} from '../../../test-support/rate-limit-fuzz.js'
import { RedisStore } from '../src/index.js'
import { nestApp, PLATFORMS } from './helpers.js'

const redis = useRedis((port) => new Redis(port, '127.0.0.1'))

// Every path: path-to-regexp's wildcard on Express, find-my-way's on Fastify.
@Controller()
class OnExpress {
  @All('{*path}')
  @Header('content-type', 'text/plain')
  any() {
    return 'ok'
  }
}

@Controller()
class OnFastify {
  @All('*')
  @Header('content-type', 'text/plain')
  any() {
    return 'ok'
  }
}

describe.each(PLATFORMS)('nest on $platform', (platform) => {
  describeFuzzContract('random requests against a model', {
    ...fuzzStores(core, () => new RedisStore({ client: redis() })),
    // Well-formed paths only: both platforms answer a malformed percent-escape 400 before routing.
    wellFormedPaths: true,
    async mount(options) {
      const app = await nestApp(platform, options, [
        platform.platform === 'fastify' ? OnFastify : OnExpress,
      ])
      await app.listen(0, '127.0.0.1')
      const { port } = app.getHttpServer().address() as AddressInfo
      return { send: httpSender(`http://127.0.0.1:${port}`), unmount: () => app.close() }
    },
  })
})
