// The default key from the platform's req.ip, where the review found holes: an address with a
// port (Azure Application Gateway's X-Forwarded-For) was one budget per connection, and a
// trust-everything setting on either platform let a client pick its key silently.
import { MemoryStore } from '@limiter/core'
import { Controller, Get } from '@nestjs/common'
import { APP_GUARD } from '@nestjs/core'
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express'
import { FastifyAdapter } from '@nestjs/platform-fastify'
import { Test } from '@nestjs/testing'
import { describe, expect, it } from 'vitest'
import { countingStore, warningsDuring } from '../../../test-support/adapter-helpers.js'
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
  return { app, store, status }
}

describe.each(PLATFORMS)('nest on $platform', (platform) => {
  it.each([
    ['an IPv4 address with a port', '203.0.113.7:50000', '203.0.113.7:50001', '203.0.113.7'],
    ['a bracketed IPv6 address with a port', '[2001:db8::1]:443', '[2001:db8::2]', '2001:db8::/56'],
  ])(
    '%s from the proxy keys as the bare address: one budget, not one per connection',
    async (_name, first, second, key) => {
      const { app, store, status } = await appWith(platform, false)
      expect(await status(first)).toBe(200)
      expect(await status(second)).toBe(429)
      expect(store.keys.map((k) => k.slice(k.indexOf('#') + 1))).toEqual([key, key])
      await app.close()
    },
  )

  it("the platform's trust-everything setting is pointed out once", async () => {
    let close = async () => {}
    const warnings = await warningsDuring(async () => {
      const { app, status } = await appWith(platform, true)
      close = () => app.close()
      expect(await status('203.0.113.1')).toBe(200)
      expect(await status('203.0.113.2')).toBe(200)
    })
    await close()
    expect(warnings.map((w) => w.code)).toEqual(['LIMITER_PERMISSIVE_TRUST_PROXY'])
    expect(warnings[0]?.message).toContain(
      platform.platform === 'fastify' ? "trustProxy: '10.0.0.0/8'" : "app.set('trust proxy', 1)",
    )
  })

  it('trusting the proxy by address gives no trust-proxy warning', async () => {
    let close = async () => {}
    const warnings = await warningsDuring(async () => {
      const { app, status } = await appWith(platform, false)
      close = () => app.close()
      expect(await status('203.0.113.1')).toBe(200)
    })
    await close()
    expect(warnings).toEqual([])
  })
})
