// Test helpers: Nest apps on both platforms (Express and Fastify) with LimiterModule and the
// guard, and the harness that runs the shared adapter contract on each.
import 'reflect-metadata'
import type { AddressInfo } from 'node:net'
import { MemoryStore } from '@limiter/core'
import {
  type ArgumentsHost,
  Catch,
  Controller,
  Get,
  HttpException,
  type INestApplication,
  Query,
  Req,
  Res,
  type Type,
} from '@nestjs/common'
import {
  type AbstractHttpAdapter,
  APP_GUARD,
  BaseExceptionFilter,
  type HttpAdapterHost,
} from '@nestjs/core'
import { ExpressAdapter } from '@nestjs/platform-express'
import { FastifyAdapter } from '@nestjs/platform-fastify'
import { Test } from '@nestjs/testing'
import request from 'supertest'
import type {
  AdapterHarness,
  ContractOptions,
  Send,
} from '../../../test-support/adapter-contract.js'
import { type HandlerProbe, handlerProbe } from '../../../test-support/harness.js'
import {
  LimiterGuard,
  LimiterModule,
  type LimiterModuleOptions,
  type RequestLike,
  SkipRateLimit,
} from '../src/index.js'

/** The request as the contract's callbacks read it, on either platform. */
type Request = RequestLike & { readonly url: string; readonly query: Record<string, string> }

/** A Nest platform: its name and a fresh HTTP adapter. */
export interface Platform {
  readonly platform: 'express' | 'fastify'
  readonly adapter: () => AbstractHttpAdapter
}

/** Both Nest platforms, by name. */
export const PLATFORMS: readonly Platform[] = [
  { platform: 'express', adapter: () => new ExpressAdapter() },
  { platform: 'fastify', adapter: () => new FastifyAdapter() },
]

/** Sets the status on Express's `res` or Fastify's reply. */
export function setStatus(res: unknown, status: number): void {
  const r = res as { code?: (s: number) => unknown; status: (s: number) => unknown }
  if (typeof r.code === 'function') r.code(status)
  else r.status(status)
}

/** Errors that are not HTTP exceptions answer 500 with `{ message, code }` (the contract's). */
@Catch()
export class ErrorsFilter extends BaseExceptionFilter {
  override catch(error: unknown, host: ArgumentsHost): void {
    if (error instanceof HttpException) {
      super.catch(error, host)
      return
    }
    const { message, code } = error as Error & { code?: string }
    const adapter = (this.httpAdapterHost as HttpAdapterHost | undefined)?.httpAdapter
    ;(adapter ?? this.applicationRef)?.reply(
      host.switchToHttp().getResponse(),
      { message, code },
      500,
    )
  }
}

@Controller()
class ContractController {
  @Get('/')
  root(
    @Req() req: Request,
    @Query('status') status: string | undefined,
    @Res({ passthrough: true }) res: unknown,
  ) {
    setStatus(res, Number(status ?? 200))
    return { ok: true, rateLimit: req.rateLimit }
  }
}

function listeningController(probe: HandlerProbe): Type<unknown> {
  @Controller()
  class ListeningController {
    @Get('/')
    root() {
      probe.started()
      return 'ok'
    }

    @Get('/slow')
    async slow() {
      probe.started()
      await probe.slow()
      return 'late'
    }

    // Outside the limits: the harness warms the server up with it (a fresh Nest app's first
    // request takes tens of ms, longer than the contract's early aborts allow).
    @Get('/warm')
    @SkipRateLimit()
    warm() {
      return 'warm'
    }

    @Get('/fail')
    fail() {
      probe.started()
      throw new Error('the handler failed')
    }
  }
  return ListeningController
}

/**
 * A Nest app on `platform` with `LimiterModule.forRoot(options)`, the guard as APP_GUARD, the
 * `controllers` and the errors filter; initialized (Fastify: ready), not listening.
 */
export async function nestApp(
  platform: Platform,
  options: LimiterModuleOptions<never>,
  controllers: Type<unknown>[] = [ContractController],
  configure?: (app: INestApplication) => void,
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [LimiterModule.forRoot(options as LimiterModuleOptions)],
    controllers,
    providers: [{ provide: APP_GUARD, useClass: LimiterGuard }],
  }).compile()
  const app = moduleRef.createNestApplication(platform.adapter(), {
    logger: false,
    forceCloseConnections: true,
  })
  app.useGlobalFilters(new ErrorsFilter(app.getHttpAdapter()))
  configure?.(app)
  await app.init()
  if (platform.platform === 'fastify')
    await (app.getHttpAdapter().getInstance() as { ready(): Promise<unknown> }).ready()
  return app
}

/** Sends requests to an initialized app: supertest on Express, inject on Fastify. */
export function sender(platform: Platform, app: INestApplication): Send {
  if (platform.platform === 'fastify') {
    const instance = app.getHttpAdapter().getInstance() as {
      inject(o: { url: string; headers: Record<string, string> }): Promise<{
        statusCode: number
        headers: Record<string, string | string[] | number | undefined>
        body: string
      }>
    }
    return async (url, headers = {}) => {
      const res = await instance.inject({ url, headers })
      return { status: res.statusCode, headers: res.headers, body: res.body }
    }
  }
  const server = app.getHttpServer()
  return async (url, headers = {}) => {
    const res = await request(server).get(url).set(headers)
    return { status: res.status, headers: res.headers, body: res.text }
  }
}

/** The errors starting an app with `options` gives: compiling the module, then NestFactory-like init. */
export async function startErrors(platform: Platform, options: unknown): Promise<unknown[]> {
  const error = await nestApp(platform, options as LimiterModuleOptions<never>).then(
    async (app) => {
      await app.close()
      return undefined
    },
    (e: unknown) => e,
  )
  return [error]
}

/** The shared adapter contract's view of Nest on `platform`. */
export function harness(platform: Platform): AdapterHarness {
  return {
    async app(options: ContractOptions) {
      return sender(platform, await nestApp(platform, options as LimiterModuleOptions<never>))
    },
    async listen(options) {
      const probe = handlerProbe()
      const app = await nestApp(platform, options as LimiterModuleOptions<never>, [
        listeningController(probe),
      ])
      await app.listen(0, '127.0.0.1')
      const { port } = app.getHttpServer().address() as AddressInfo
      const url = `http://127.0.0.1:${port}`
      await (await fetch(`${url}/warm`)).text()
      return probe.listening({ url, close: () => app.close() })
    },
    store: () => new MemoryStore(),
    optionErrors: (options) => startErrors(platform, options),
    callbacks: {
      denyBanned: (req: Request) => req.headers['x-banned'] === 'yes',
      skipInternal: (req: Request) => req.headers['x-internal'] === 'yes',
      costFromQuery: (req: Request) => Number(req.query.cost ?? 1),
      pathMessage: (req: Request) => ({ path: req.url }),
    },
  }
}
