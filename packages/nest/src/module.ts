// LimiterModule: forRoot / forRootAsync provide the options, the limiters and the guard, app-wide.
import {
  type DynamicModule,
  type FactoryProvider,
  Module,
  type ModuleMetadata,
} from '@nestjs/common'
import { LimiterGuard } from './guard.js'
import { LimiterRegistry } from './limiters.js'
import type { LimiterModuleOptions, RequestLike } from './types.js'

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

const registry: FactoryProvider = {
  provide: LimiterRegistry,
  useFactory: (options: unknown) => new LimiterRegistry(options),
  inject: [LIMITER_OPTIONS],
}

/**
 * The rate-limiting module, global once imported: `forRoot(options)` (or `forRootAsync`) sets
 * the defaults every `@RateLimit` builds on, and with a policy the limiter of every route without
 * one. Options are checked as the app starts: a bad one fails it, naming the option.
 *
 * @example
 * imports: [LimiterModule.forRoot({ limit: 100, window: '1m', redis })],
 * providers: [{ provide: APP_GUARD, useClass: LimiterGuard }],
 */
// biome-ignore lint/complexity/noStaticOnlyClass: a Nest module is a class; forRoot is its idiom
export class LimiterModule {
  static forRoot<Req = RequestLike>(options: LimiterModuleOptions<Req> = {}): DynamicModule {
    return LimiterModule.#module([{ provide: LIMITER_OPTIONS, useValue: options }], [])
  }

  static forRootAsync<Req = RequestLike>(options: LimiterModuleAsyncOptions<Req>): DynamicModule {
    const factory: FactoryProvider = {
      provide: LIMITER_OPTIONS,
      useFactory: options.useFactory as (...args: unknown[]) => unknown,
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
      imports,
      providers: [...providers, registry, LimiterGuard],
      exports: [LIMITER_OPTIONS, LimiterRegistry, LimiterGuard],
    }
  }
}

Module({})(LimiterModule)
