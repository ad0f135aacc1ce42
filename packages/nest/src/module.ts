// LimiterModule: forRoot / forRootAsync provide the options, the limiters and the guard, app-wide.
import { LimiterTypeError } from '@limiter/core'
import { optionsObject } from '@limiter/core/http'
import {
  type DynamicModule,
  type FactoryProvider,
  Inject,
  Module,
  type ModuleMetadata,
  type OnApplicationBootstrap,
  type OnModuleInit,
} from '@nestjs/common'
import {
  ApplicationConfig,
  DiscoveryModule,
  DiscoveryService,
  HttpAdapterHost,
  MetadataScanner,
  Reflector,
} from '@nestjs/core'
import { LimiterGuard } from './guard.js'
import { type LimitedHandler, unguarded, warnUnguarded } from './guard-binding.js'
import { LimiterRegistry } from './limiters.js'
import type { LimiterModuleOptions, RequestLike } from './types.js'

// Where @Get, @Post... put a route's path: a method with it is a route handler.
const PATH_METADATA = 'path'

/** The injection token of the module's options. */
export const LIMITER_OPTIONS = Symbol('@limiter/nest options')

/** `LimiterModule.forRootAsync` options: a factory of the options, with what it injects. */
export interface LimiterModuleAsyncOptions<Req = RequestLike> {
  readonly imports?: ModuleMetadata['imports']
  readonly inject?: FactoryProvider['inject']
  readonly useFactory: (
    ...args: never[]
  ) => LimiterModuleOptions<Req> | Promise<LimiterModuleOptions<Req>>
}

const ASYNC_OPTIONS = new Set(['imports', 'inject', 'useFactory'])

// forRootAsync's options: `useFactory` (with `inject`, `imports`), and nothing else said silently.
function asyncFactory(options: unknown): (...args: unknown[]) => unknown {
  const given = optionsObject('LimiterModule.forRootAsync options', options) as {
    useFactory?: unknown
  }
  for (const name of Object.keys(given))
    if (!ASYNC_OPTIONS.has(name))
      throw new LimiterTypeError(
        `LimiterModule.forRootAsync ${name}`,
        (given as Record<string, unknown>)[name],
        name === 'isGlobal'
          ? 'nothing: the module is global already'
          : 'not an option: forRootAsync takes `useFactory` (with `inject` and `imports`)',
      )
  if (typeof given.useFactory !== 'function')
    throw new LimiterTypeError(
      'LimiterModule.forRootAsync useFactory',
      given.useFactory,
      'a function that returns the options (useClass and useExisting are not supported)',
    )
  return given.useFactory as (...args: unknown[]) => unknown
}

const registry: FactoryProvider = {
  provide: LimiterRegistry,
  useFactory: (options: unknown) => new LimiterRegistry(options),
  inject: [LIMITER_OPTIONS],
}

/**
 * The rate-limiting module, global once imported: `forRoot(options)` (or `forRootAsync`) sets
 * the defaults every `@RateLimit` builds on, and with a policy the limiter of every route without
 * one. Options are checked as the app starts, `@RateLimit`'s too (each handler's limiter is
 * built then): a bad one fails the start, naming the option (and the handler).
 *
 * @example
 * imports: [LimiterModule.forRoot({ limit: 100, window: '1m', redis })],
 * providers: [{ provide: APP_GUARD, useClass: LimiterGuard }],
 */
export class LimiterModule implements OnModuleInit, OnApplicationBootstrap {
  readonly #discovery: DiscoveryService
  readonly #limiters: LimiterRegistry
  readonly #reflector: Reflector
  readonly #config: ApplicationConfig
  readonly #http: HttpAdapterHost
  // the route handlers with a limiter, found at init
  #limited: LimitedHandler[] = []

  constructor(
    discovery: DiscoveryService,
    limiters: LimiterRegistry,
    reflector: Reflector,
    config: ApplicationConfig,
    http: HttpAdapterHost,
  ) {
    this.#discovery = discovery
    this.#limiters = limiters
    this.#reflector = reflector
    this.#config = config
    this.#http = http
  }

  /** Builds the limiter of every route handler of the app's controllers. */
  onModuleInit(): void {
    const scanner = new MetadataScanner()
    const limited: LimitedHandler[] = []
    for (const { metatype } of this.#discovery.getControllers()) {
      if (typeof metatype !== 'function') continue
      const prototype = metatype.prototype as Record<string, unknown>
      for (const name of scanner.getAllMethodNames(prototype)) {
        const handler = prototype[name]
        if (typeof handler !== 'function') continue
        if (this.#reflector.get(PATH_METADATA, handler) === undefined) continue
        if (this.#limiters.handler(metatype, handler, this.#reflector) !== null)
          limited.push({ controller: metatype, handler })
      }
    }
    this.#limited = limited
  }

  /**
   * Warns (`LIMITER_NO_GUARD`) when handlers have limits but no LimiterGuard runs for them: not
   * bound for the whole app (APP_GUARD, `app.useGlobalGuards`), nor with `@UseGuards` on their
   * controller or themselves. Checked once the app's global guards are all known.
   */
  onApplicationBootstrap(): void {
    // an application context without HTTP serves no routes
    if (this.#http.httpAdapter === undefined) return
    const missed = unguarded(this.#limited, this.#config, this.#reflector)
    if (missed.length > 0) warnUnguarded(missed)
  }

  static forRoot<Req = RequestLike>(options: LimiterModuleOptions<Req> = {}): DynamicModule {
    return LimiterModule.#module([{ provide: LIMITER_OPTIONS, useValue: options }], [])
  }

  static forRootAsync<Req = RequestLike>(options: LimiterModuleAsyncOptions<Req>): DynamicModule {
    const make = asyncFactory(options)
    const factory: FactoryProvider = {
      provide: LIMITER_OPTIONS,
      // a factory that returns nothing (a missing `return`) would start the app unlimited
      useFactory: async (...args: unknown[]) => {
        const given = await make(...args)
        if (given === undefined || given === null)
          throw new LimiterTypeError(
            'LimiterModule.forRootAsync useFactory',
            given,
            'an object of options (a missing `return`?)',
          )
        return given
      },
      inject: options.inject ?? [],
    }
    return LimiterModule.#module([factory], options.imports ?? [])
  }

  static #module(
    providers: NonNullable<ModuleMetadata['providers']>,
    imports: NonNullable<ModuleMetadata['imports']>,
  ): DynamicModule {
    return {
      module: LimiterModule,
      global: true,
      imports: [DiscoveryModule, ...imports],
      providers: [...providers, registry, LimiterGuard],
      exports: [LIMITER_OPTIONS, LimiterRegistry, LimiterGuard],
    }
  }
}

Module({})(LimiterModule)
Inject(DiscoveryService)(LimiterModule, undefined, 0)
Inject(LimiterRegistry)(LimiterModule, undefined, 1)
Inject(Reflector)(LimiterModule, undefined, 2)
Inject(ApplicationConfig)(LimiterModule, undefined, 3)
Inject(HttpAdapterHost)(LimiterModule, undefined, 4)
