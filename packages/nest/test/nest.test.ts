// What is Nest's own, on both platforms: @RateLimit on classes and handlers over forRoot's
// defaults, per-handler counters, @SkipRateLimit, the guard per controller, forRootAsync,
// exception filters over RateLimitException, onLimited, and trust proxy.
import {
  type ArgumentsHost,
  Catch,
  Controller,
  type ExceptionFilter,
  Get,
  HttpException,
  Module,
  type Type,
  UseGuards,
} from '@nestjs/common'
import { APP_GUARD } from '@nestjs/core'
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express'
import { FastifyAdapter } from '@nestjs/platform-fastify'
import { Test } from '@nestjs/testing'
import { describe, expect, it } from 'vitest'
import {
  LimiterGuard,
  LimiterModule,
  RateLimit,
  RateLimitException,
  type RequestLike,
  SkipRateLimit,
} from '../src/index.js'
import { ErrorsFilter, nestApp, PLATFORMS, type Platform, sender, setStatus } from './helpers.js'

@Controller('a')
class AController {
  @Get('one')
  @RateLimit({ limit: 2, window: '1m' })
  one() {
    return 'one'
  }

  @Get('two')
  @RateLimit({ limit: 2, window: '1m' })
  two() {
    return 'two'
  }

  @Get('free')
  free() {
    return 'free'
  }

  @Get('skipped')
  @SkipRateLimit()
  skipped() {
    return 'skipped'
  }
}

@Controller('b')
@RateLimit({ limit: 3, window: '1m' })
class BController {
  @Get('one')
  one() {
    return 'one'
  }

  @Get('two')
  two() {
    return 'two'
  }

  @Get('own')
  @RateLimit({ limit: 1 })
  own() {
    return 'own'
  }
}

@Controller('c')
@RateLimit({ limit: 2, window: '1m', name: 'shared' })
class CController {
  @Get('one')
  one() {
    return 'one'
  }

  @Get('two')
  two() {
    return 'two'
  }
}

@Controller('d')
@SkipRateLimit()
class DController {
  @Get('skipped')
  skipped() {
    return 'skipped'
  }

  @Get('limited')
  @SkipRateLimit(false)
  @RateLimit({ limit: 1, window: '1m' })
  limited() {
    return 'limited'
  }
}

const CONTROLLERS: Type<unknown>[] = [AController, BController, CController, DController]

const statuses = async (send: (path: string) => Promise<{ status: number }>, paths: string[]) => {
  const out: number[] = []
  for (const path of paths) out.push((await send(path)).status)
  return out
}

describe.each(PLATFORMS)('nest on $platform', (platform: Platform) => {
  const appWith = async (options: object, controllers = CONTROLLERS) => {
    const app = await nestApp(platform, options, controllers)
    return { app, send: sender(platform, app) }
  }

  describe('@RateLimit', () => {
    it('on a handler: its own counter, scoped to the controller and handler', async () => {
      const { app, send } = await appWith({})
      const res = await send('/a/one')
      expect(res.headers['ratelimit-policy']).toBe('"gc2/1m";q=2;w=60')
      expect(await statuses(send, ['/a/one', '/a/one', '/a/two', '/a/two', '/a/two'])).toEqual([
        200, 429, 200, 200, 429,
      ])
      // without forRoot's policy, an undecorated handler is not limited
      const free = await send('/a/free')
      expect(free.status).toBe(200)
      expect(free.headers.ratelimit).toBeUndefined()
      await app.close()
    })

    it('on a class: each handler counts on its own; a handler option overrides the class', async () => {
      const { app, send } = await appWith({})
      expect(await statuses(send, ['/b/one', '/b/one', '/b/one', '/b/one'])).toEqual([
        200, 200, 200, 429,
      ])
      expect((await send('/b/two')).status).toBe(200)
      // `limit: 1` over the class's `window: '1m'`
      const own = await send('/b/own')
      expect(own.headers['ratelimit-policy']).toBe('"gc1/1m";q=1;w=60')
      expect((await send('/b/own')).status).toBe(429)
      await app.close()
    })

    it('handlers that share a name share one counter', async () => {
      const { app, send } = await appWith({})
      expect(await statuses(send, ['/c/one', '/c/two', '/c/one'])).toEqual([200, 200, 429])
      expect((await send('/c/two')).headers['ratelimit-policy']).toBe('"shared";q=2;w=60')
      await app.close()
    })

    it("builds on forRoot's defaults: window, headers, prefix", async () => {
      @Controller()
      class Defaults {
        @Get()
        @RateLimit({ limit: 1 })
        get() {
          return 'ok'
        }
      }
      const { app, send } = await appWith({ window: '10s', headers: 'draft-7' }, [Defaults])
      const res = await send('/')
      expect(res.headers['ratelimit-policy']).toBe('1;w=10')
      expect(res.headers.ratelimit).toMatch(/^limit=1, remaining=0, reset=\d+$/)
      await app.close()
    })

    it("forRoot's policy limits every undecorated handler, together; @RateLimit replaces it", async () => {
      const { app, send } = await appWith({ limit: 2, window: '1m' })
      expect((await send('/a/free')).headers['ratelimit-policy']).toBe('"gc2/1m";q=2;w=60')
      expect(await statuses(send, ['/b/one', '/a/free', '/a/free'])).toEqual([200, 200, 429])
      // /b/one counted in its own limiter, not the global one
      expect((await send('/a/one')).status).toBe(200)
      await app.close()
    })

    it('a bad @RateLimit fails the start naming the option and the handler', async () => {
      @Controller()
      class Bad {
        @Get()
        @RateLimit({ limit: 1, window: 'soon' })
        get() {
          return 'ok'
        }
      }
      const error = await nestApp(platform, {}, [Bad]).then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(TypeError)
      expect((error as Error).message).toMatch(/`window`.*\(@RateLimit of Bad\.get\)$/)
    })
  })

  describe('@SkipRateLimit', () => {
    it('exempts a handler, or a class; @SkipRateLimit(false) limits a handler again', async () => {
      const { app, send } = await appWith({ limit: 1, window: '1m' })
      expect(
        await statuses(send, ['/a/skipped', '/a/skipped', '/d/skipped', '/d/skipped']),
      ).toEqual([200, 200, 200, 200])
      expect(await statuses(send, ['/d/limited', '/d/limited'])).toEqual([200, 429])
      expect((await send('/a/skipped')).headers.ratelimit).toBeUndefined()
      await app.close()
    })
  })

  it('the guard per controller (@UseGuards), counting once when also global', async () => {
    @Controller()
    @UseGuards(LimiterGuard)
    @RateLimit({ limit: 2, window: '1m' })
    class Guarded {
      @Get()
      get() {
        return 'ok'
      }
    }
    for (const global of [false, true]) {
      const moduleRef = await Test.createTestingModule({
        imports: [LimiterModule.forRoot()],
        controllers: [Guarded],
        providers: global ? [{ provide: APP_GUARD, useClass: LimiterGuard }] : [],
      }).compile()
      const app = moduleRef.createNestApplication(platform.adapter(), { logger: false })
      await app.init()
      if (platform.platform === 'fastify')
        await (app.getHttpAdapter().getInstance() as { ready(): Promise<unknown> }).ready()
      const send = sender(platform, app)
      const first = await send('/')
      expect(first.headers.ratelimit).toMatch(/^"gc2\/1m";r=1;t=\d+$/)
      expect(await statuses(send, ['/', '/'])).toEqual([200, 429])
      await app.close()
    }
  })

  it('forRootAsync takes its options from a factory with injected providers', async () => {
    const CONFIG = Symbol('config')
    @Module({ providers: [{ provide: CONFIG, useValue: { perMinute: 1 } }], exports: [CONFIG] })
    class ConfigModule {}
    @Controller()
    class Home {
      @Get()
      @RateLimit()
      get() {
        return 'ok'
      }
    }
    const moduleRef = await Test.createTestingModule({
      imports: [
        LimiterModule.forRootAsync({
          imports: [ConfigModule],
          inject: [CONFIG],
          useFactory: async (config: { perMinute: number }) => ({
            limit: config.perMinute,
            window: '1m',
          }),
        }),
      ],
      controllers: [Home],
      providers: [{ provide: APP_GUARD, useClass: LimiterGuard }],
    }).compile()
    const app = moduleRef.createNestApplication(platform.adapter(), { logger: false })
    await app.init()
    if (platform.platform === 'fastify')
      await (app.getHttpAdapter().getInstance() as { ready(): Promise<unknown> }).ready()
    const send = sender(platform, app)
    expect((await send('/')).headers['ratelimit-policy']).toBe('"gc1/1m";q=1;w=60')
    expect((await send('/')).status).toBe(429)
    await app.close()
  })

  // Regression: a factory missing its `return` started the app unlimited, silently; throttler's
  // shapes failed with no word of what to write instead
  it.each<[string, () => unknown, RegExp]>([
    [
      'a factory that returns nothing',
      () => LimiterModule.forRootAsync({ useFactory: async () => undefined as never }),
      /`LimiterModule\.forRootAsync useFactory`: expected an object of options \(a missing `return`\?\)/,
    ],
    [
      "@nestjs/throttler's list of throttlers",
      () => LimiterModule.forRoot([{ ttl: 60000, limit: 10 }] as never),
      /forRoot\(\{ limits: \[\{ name, limit, window \}\] \}\)/,
    ],
    [
      'useClass instead of useFactory',
      () => LimiterModule.forRootAsync({ useClass: class {} } as never),
      /`LimiterModule\.forRootAsync useClass`: .*forRootAsync takes `useFactory`/,
    ],
  ])('%s fails the start, saying what to write', async (_, module, message) => {
    const start = async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [module() as never],
        controllers: [],
      }).compile()
      const app = moduleRef.createNestApplication(platform.adapter(), { logger: false })
      await app.init()
      await app.close()
    }
    await expect(start()).rejects.toThrow(message)
  })

  describe('the limited response', () => {
    it('a filter of yours catches RateLimitException and reshapes it; the headers stay', async () => {
      @Catch(RateLimitException)
      class Reshape implements ExceptionFilter {
        catch(exception: RateLimitException, host: ArgumentsHost) {
          const res = host.switchToHttp().getResponse()
          const r = res as { header(n: string, v: string): unknown }
          setStatus(res, exception.getStatus())
          r.header('content-type', 'application/json; charset=utf-8')
          const body = JSON.stringify({
            error: 'slow down',
            retryInMs: exception.decision.retryAfterMs,
            title: (exception.getResponse() as { title: string }).title,
          })
          if (typeof (res as { send?: unknown }).send === 'function')
            (res as { send(b: string): unknown }).send(body)
        }
      }
      const app = await nestApp(platform, { limit: 1, window: '1m' }, [AController], (a) =>
        a.useGlobalFilters(new ErrorsFilter(a.getHttpAdapter()), new Reshape()),
      )
      const send = sender(platform, app)
      await send('/a/free')
      const res = await send('/a/free')
      expect(res.status).toBe(429)
      expect(res.headers['content-type']).toMatch(/^application\/json/)
      expect(res.headers['retry-after']).toMatch(/^\d+$/)
      expect(res.headers.ratelimit).toMatch(/^"gc1\/1m";r=0;t=\d+$/)
      const body = JSON.parse(res.body)
      expect(body).toMatchObject({ error: 'slow down', title: 'Request quota exceeded' })
      expect(body.retryInMs).toBeGreaterThan(0)
      await app.close()
    })

    it("onLimited may throw an exception of its own: Nest's layer renders it", async () => {
      const { app, send } = await appWith({
        limit: 1,
        window: '1m',
        onLimited: () => {
          throw new HttpException({ reason: 'busy' }, 418)
        },
      })
      await send('/a/free')
      const res = await send('/a/free')
      expect(res.status).toBe(418)
      expect(JSON.parse(res.body)).toEqual({ reason: 'busy' })
      expect(res.headers['retry-after']).toMatch(/^\d+$/)
      await app.close()
    })

    it('onLimited may send the response itself; returning without it sends the default', async () => {
      let sends = true
      const { app, send } = await appWith({
        limit: 1,
        window: '1m',
        onLimited: (context: { switchToHttp(): { getResponse(): unknown } }) => {
          if (!sends) return
          const res = context.switchToHttp().getResponse()
          setStatus(res, 420)
          ;(res as { send(b: string): unknown }).send('calm down')
        },
      })
      await send('/a/free')
      const custom = await send('/a/free')
      expect([custom.status, custom.body]).toEqual([420, 'calm down'])
      sends = false
      const fallback = await send('/a/free')
      expect(fallback.status).toBe(429)
      expect(fallback.headers['content-type']).toMatch(/^application\/problem\+json/)
      await app.close()
    })
  })

  it("keys on the platform's client IP, trust proxy applied", async () => {
    @Controller()
    class Home {
      @Get()
      @RateLimit({ limit: 1, window: '1m', key: (req: RequestLike) => `ip:${req.ip}` })
      get() {
        return 'ok'
      }
    }
    const moduleRef = await Test.createTestingModule({
      imports: [LimiterModule.forRoot()],
      controllers: [Home],
      providers: [{ provide: APP_GUARD, useClass: LimiterGuard }],
    }).compile()
    const adapter =
      platform.platform === 'fastify'
        ? new FastifyAdapter({ trustProxy: '127.0.0.1' })
        : new ExpressAdapter()
    const app = moduleRef.createNestApplication(adapter, { logger: false })
    if (platform.platform === 'express')
      (app as NestExpressApplication).set('trust proxy', 'loopback')
    await app.init()
    if (platform.platform === 'fastify')
      await (app.getHttpAdapter().getInstance() as { ready(): Promise<unknown> }).ready()
    const send = sender(platform, app)
    const from = (ip: string) => send('/', { 'x-forwarded-for': ip })
    expect((await from('203.0.113.1')).status).toBe(200)
    expect((await from('203.0.113.1')).status).toBe(429)
    expect((await from('203.0.113.2')).status).toBe(200)
    await app.close()
  })
})
