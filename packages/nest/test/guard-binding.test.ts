// A handler with a limit but no LimiterGuard to run it is unlimited: the module says so at start-up
// (LIMITER_NO_GUARD), and stays quiet for every way of binding the guard. A handler's `limits`
// that override some of forRoot's named policies drop the others: said at start-up too
// (LIMITER_NEST_LIMITS_REPLACED), as @nestjs/throttler's @Throttle keeps them.
import 'reflect-metadata'
import {
  Controller,
  type INestApplication,
  Post,
  type Provider,
  Scope,
  type Type,
  UseGuards,
} from '@nestjs/common'
import { APP_GUARD } from '@nestjs/core'
import { ExpressAdapter } from '@nestjs/platform-express'
import { Test } from '@nestjs/testing'
import request from 'supertest'
import { afterEach, describe, expect, it } from 'vitest'
import { type Warning, warningsDuring } from '../../../test-support/adapter-helpers.js'
import { LimiterGuard, LimiterModule, type LimiterModuleOptions, RateLimit } from '../src/index.js'

@Controller()
class Login {
  @Post('login')
  @RateLimit({ limit: 5, window: '1m' })
  login() {
    return 'in'
  }

  @Post('open')
  open() {
    return 'open'
  }
}

@Controller('guarded')
@UseGuards(LimiterGuard)
class GuardedController {
  @Post('login')
  @RateLimit({ limit: 5, window: '1m' })
  login() {
    return 'in'
  }
}

@Controller('handler')
class GuardedHandler {
  @Post('login')
  @UseGuards(LimiterGuard)
  @RateLimit({ limit: 5, window: '1m' })
  login() {
    return 'in'
  }
}

@Controller('plain')
class Plain {
  @Post('login')
  login() {
    return 'in'
  }
}

@Controller('shared')
@RateLimit({ limit: 5, window: '1m' })
class SharedLimit {
  @Post('a')
  a() {
    return 'a'
  }

  @Post('b')
  b() {
    return 'b'
  }
}

interface Setup {
  readonly controllers: Type<unknown>[]
  readonly providers?: Provider[]
  readonly options?: LimiterModuleOptions
  readonly configure?: (app: INestApplication) => void
}

const apps: INestApplication[] = []
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close()
})

// Starts the app; returns it and the warnings its start-up gave.
async function start(
  setup: Setup,
  code = 'LIMITER_NO_GUARD',
): Promise<{ app: INestApplication; warnings: Warning[] }> {
  let app: INestApplication | undefined
  const warnings = await warningsDuring(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [LimiterModule.forRoot(setup.options ?? {})],
      controllers: setup.controllers,
      providers: setup.providers ?? [],
    }).compile()
    app = moduleRef.createNestApplication(new ExpressAdapter(), { logger: false })
    setup.configure?.(app)
    await app.init()
  })
  if (app === undefined) throw new Error('no app')
  apps.push(app)
  return { app, warnings: warnings.filter((w) => w.code === code) }
}

// The statuses of `count` POSTs to `path`.
async function statuses(app: INestApplication, path: string, count: number): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < count; i++) out.push((await request(app.getHttpServer()).post(path)).status)
  return out
}

const LIMITED = [201, 201, 201, 201, 201, 429]

describe('a limited handler without a LimiterGuard', () => {
  it('is unlimited, and the start-up warns once, naming it', async () => {
    const { app, warnings } = await start({ controllers: [Login] })
    expect(warnings).toHaveLength(1)
    expect(warnings[0]?.name).toBe('LimiterWarning')
    expect(warnings[0]?.message).toContain('Login.login has a limit')
    expect(warnings[0]?.message).toContain('APP_GUARD')
    expect(warnings[0]?.message).not.toContain('Login.open')
    expect(await statuses(app, '/login', 6)).toEqual([201, 201, 201, 201, 201, 201])
  })

  it('names the first few of many, and only those no guard covers', async () => {
    const { warnings } = await start({
      controllers: [Login, SharedLimit, GuardedController, GuardedHandler],
    })
    expect(warnings).toHaveLength(1)
    const message = warnings[0]?.message ?? ''
    expect(message).toContain('Login.login, SharedLimit.a, SharedLimit.b have limits')
    expect(message).not.toContain('Guarded')
  })

  it("counts forRoot's policy as a limit", async () => {
    const { warnings } = await start({ controllers: [Plain], options: { limit: 5, window: '1m' } })
    expect(warnings[0]?.message).toContain('Plain.login has a limit')
  })
})

describe('no warning', () => {
  it('with APP_GUARD', async () => {
    const { app, warnings } = await start({
      controllers: [Login],
      providers: [{ provide: APP_GUARD, useClass: LimiterGuard }],
    })
    expect(warnings).toEqual([])
    expect(await statuses(app, '/login', 6)).toEqual(LIMITED)
  })

  it('with a request-scoped APP_GUARD', async () => {
    const { app, warnings } = await start({
      controllers: [Login],
      providers: [{ provide: APP_GUARD, useClass: LimiterGuard, scope: Scope.REQUEST }],
    })
    expect(warnings).toEqual([])
    expect(await statuses(app, '/login', 6)).toEqual(LIMITED)
  })

  it('with app.useGlobalGuards(app.get(LimiterGuard))', async () => {
    const { app, warnings } = await start({
      controllers: [Login],
      configure: (app) => app.useGlobalGuards(app.get(LimiterGuard)),
    })
    expect(warnings).toEqual([])
    expect(await statuses(app, '/login', 6)).toEqual(LIMITED)
  })

  it('with @UseGuards(LimiterGuard) on the controller, or on the handler', async () => {
    const { app, warnings } = await start({ controllers: [GuardedController, GuardedHandler] })
    expect(warnings).toEqual([])
    expect(await statuses(app, '/guarded/login', 6)).toEqual(LIMITED)
    expect(await statuses(app, '/handler/login', 6)).toEqual(LIMITED)
  })

  it('without limited handlers', async () => {
    const { warnings } = await start({ controllers: [Plain] })
    expect(warnings).toEqual([])
  })
})

const TIERS: LimiterModuleOptions = {
  limits: [
    { name: 'short', limit: 3, window: '1s' },
    { name: 'long', limit: 5, window: '1m' },
  ],
}

@Controller('tiers')
class Tiers {
  // a throttler user's override of `short`: `long` is gone for this handler
  @Post('short')
  @RateLimit({ limits: [{ name: 'short', limit: 10, window: '1s' }] })
  short() {
    return 'short'
  }

  // every policy kept
  @Post('both')
  @RateLimit({
    limits: [
      { name: 'short', limit: 10, window: '1s' },
      { name: 'long', limit: 5, window: '1m' },
    ],
  })
  both() {
    return 'both'
  }

  // a set of its own: nothing of forRoot's named
  @Post('own')
  @RateLimit({ limits: [{ name: 'uploads', limit: 2, window: '1m' }] })
  own() {
    return 'own'
  }

  @Post('plain')
  @RateLimit({ limit: 2, window: '1m' })
  plain() {
    return 'plain'
  }
}

describe("a handler's limits naming some of forRoot's", () => {
  it('warns at start-up, naming the handler and the policies it dropped', async () => {
    const { app, warnings } = await start(
      {
        controllers: [Tiers],
        options: TIERS,
        providers: [{ provide: APP_GUARD, useClass: LimiterGuard }],
      },
      'LIMITER_NEST_LIMITS_REPLACED',
    )
    expect(warnings).toHaveLength(1)
    expect(warnings[0]?.name).toBe('LimiterWarning')
    expect(warnings[0]?.message).toContain('@RateLimit of Tiers.short')
    expect(warnings[0]?.message).toContain('but not "long"')
    // what it says: the handler's set replaced forRoot's, `long` (5 a minute) does not apply
    expect(await statuses(app, '/tiers/short', 6)).toEqual([201, 201, 201, 201, 201, 201])
  })
})

// Regression: a ThrottlerGuard subclass migrated onto LimiterGuard kept its hooks, which nothing
// calls: every user shared the IP key and admins were limited, silently
describe('a LimiterGuard subclass with @nestjs/throttler hooks', () => {
  class UserGuard extends LimiterGuard {
    protected async getTracker(req: { headers: Record<string, string> }): Promise<string> {
      return req.headers['x-user'] ?? ''
    }
  }

  it('fails the start, naming the hook and the option to use', async () => {
    await expect(
      start({
        controllers: [Login],
        providers: [{ provide: APP_GUARD, useClass: UserGuard }],
      }),
    ).rejects.toThrow(
      /`UserGuard\.getTracker`: expected no override .*use `key: \(req\) => \.\.\.` instead/,
    )
  })

  it('a subclass without them is a LimiterGuard', async () => {
    class Quiet extends LimiterGuard {}
    const { app } = await start({
      controllers: [Login],
      providers: [{ provide: APP_GUARD, useClass: Quiet }],
    })
    expect(await statuses(app, '/login', 6)).toEqual(LIMITED)
  })
})
