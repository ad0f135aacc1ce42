// The default key from the platform's req.ip: the shared client-key contract on Nest's Express
// and Fastify platforms, where the trust-everything setting is the platform's own.
import { MemoryStore } from '@limiter/core'
import { Controller, Get } from '@nestjs/common'
import { APP_GUARD } from '@nestjs/core'
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express'
import { FastifyAdapter } from '@nestjs/platform-fastify'
import { Test } from '@nestjs/testing'
import { describe } from 'vitest'
import { countingStore } from '../../../test-support/adapter-helpers.js'
import { clientKeyContract } from '../../../test-support/client-key-contract.js'
import { LimiterGuard, LimiterModule } from '../src/index.js'
import { PLATFORMS, type Platform, sender } from './helpers.js'

@Controller()
class Home {
  @Get()
  get() {
    return 'ok'
  }
}

// An app trusting every proxy hop (`true`), or its one proxy, the loopback, by address.
async function appWith(platform: Platform, everyHop: boolean) {
  const store = countingStore(new MemoryStore())
  const moduleRef = await Test.createTestingModule({
    imports: [LimiterModule.forRoot({ limit: 1, window: '1m', store })],
    controllers: [Home],
    providers: [{ provide: APP_GUARD, useClass: LimiterGuard }],
  }).compile()
  const fastify = platform.platform === 'fastify'
  const adapter = fastify
    ? new FastifyAdapter({ trustProxy: everyHop ? true : '127.0.0.1' })
    : new ExpressAdapter()
  const app = moduleRef.createNestApplication(adapter, { logger: false })
  if (!fastify) (app as NestExpressApplication).set('trust proxy', everyHop ? true : 'loopback')
  await app.init()
  if (fastify) await (app.getHttpAdapter().getInstance() as { ready(): Promise<unknown> }).ready()
  const send = sender(platform, app)
  const status = async (xff: string) => (await send('/', { 'x-forwarded-for': xff })).status
  // the guard's keys carry the handler's scope before '#'
  const keys = () => store.keys.map((k) => k.slice(k.indexOf('#') + 1))
  return { status, keys, close: () => app.close() }
}

describe.each(PLATFORMS)('nest on $platform', (platform) => {
  clientKeyContract({
    behindOne: () => appWith(platform, false),
    trustingAll: () => appWith(platform, true),
    hint:
      platform.platform === 'fastify' ? "trustProxy: '10.0.0.0/8'" : "app.set('trust proxy', 1)",
  })
})
