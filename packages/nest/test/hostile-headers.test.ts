// Forged client-address headers through the guard (the default key, the client IP) on both
// platforms: without trust proxy no header is read; with it, the platform's own resolution picks
// the right hop of X-Forwarded-For and nothing else.
import { MemoryStore } from '@limiter/core'
import { Controller, Get, Req } from '@nestjs/common'
import { APP_GUARD } from '@nestjs/core'
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express'
import { FastifyAdapter } from '@nestjs/platform-fastify'
import { Test } from '@nestjs/testing'
import { describe, expect, it } from 'vitest'
import { countingStore, forgedAddressHeaders } from '../../../test-support/adapter-helpers.js'
import { ipKey, LimiterGuard, LimiterModule, type RequestLike } from '../src/index.js'
import { PLATFORMS, type Platform, sender } from './helpers.js'

const FORGED = forgedAddressHeaders(12, true)

@Controller()
class Home {
  @Get()
  get(@Req() req: RequestLike) {
    return ipKey(req.ip)
  }
}

// An app whose one proxy is the loopback (trust proxy on), or with no trusted proxy.
async function appWith(platform: Platform, trusted: boolean, limit: number) {
  const store = countingStore(new MemoryStore())
  const moduleRef = await Test.createTestingModule({
    // Forged headers are the point here: the ignored-header warning has its own test.
    imports: [LimiterModule.forRoot({ limit, window: '1m', store, warnings: false })],
    controllers: [Home],
    providers: [{ provide: APP_GUARD, useClass: LimiterGuard }],
  }).compile()
  const fastify = platform.platform === 'fastify'
  const adapter = fastify
    ? new FastifyAdapter(trusted ? { trustProxy: '127.0.0.1' } : {})
    : new ExpressAdapter()
  const app = moduleRef.createNestApplication(adapter, { logger: false })
  if (!fastify && trusted) (app as NestExpressApplication).set('trust proxy', 'loopback')
  await app.init()
  if (fastify) await (app.getHttpAdapter().getInstance() as { ready(): Promise<unknown> }).ready()
  return { app, store, send: sender(platform, app) }
}

describe.each(PLATFORMS)('nest on $platform: forged address headers', (platform) => {
  it('without trust proxy, every forged header is ignored: one counter for the socket address', async () => {
    const { app, store, send } = await appWith(platform, false, 5)
    const statuses: number[] = []
    for (const headers of FORGED) statuses.push((await send('/', headers)).status)
    expect(statuses).toEqual([...Array(5).fill(200), ...Array(7).fill(429)])
    expect(new Set(store.keys)).toEqual(new Set(['127.0.0.1']))
    await app.close()
  })

  it('with trust proxy, the right hop of X-Forwarded-For is the key; forged hops and other headers change nothing', async () => {
    const { app, store, send } = await appWith(platform, true, 3)
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) {
      const res = await send('/', {
        ...FORGED[i],
        'x-forwarded-for': `10.9.9.${i}, 198.51.100.7`,
      })
      statuses.push(res.status)
      if (res.status === 200) expect(res.body).toBe('198.51.100.7')
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429])
    expect(new Set(store.keys)).toEqual(new Set(['198.51.100.7']))
    await app.close()
  })
})
