// Which limiter a handler runs: forRoot's defaults under the class's and the handler's
// @RateLimit, built once per (controller, handler) and shared by every instance of the guard.
import { closeLimiters, LimiterTypeError, MemoryStore } from '@limiter/core'
import {
  optionsObject,
  type PartialOptions,
  probeOf,
  type RateLimitOptions,
  type ResolvedRateLimit,
  resolveRateLimitOptions,
  withDefaults,
} from '@limiter/core/http'
import type { Reflector } from '@nestjs/core'
import { RATE_LIMIT, SKIP_RATE_LIMIT } from './decorators.js'
import type { OnLimited, RequestLike } from './types.js'

/** Resolved options with the request as the guard sees it. */
export type Resolved = ResolvedRateLimit<RequestLike, OnLimited>

/** A handler's limiter and its route scope (`Controller.handler`; `''` for forRoot's). */
export interface HandlerLimit {
  readonly rl: Resolved
  readonly scope: string
}

type Options = PartialOptions<RequestLike, OnLimited>

/** A controller class or a handler method, as Nest's ExecutionContext gives them. */
type Target = { readonly name: string }

const SPEC = {
  ip: (req: RequestLike) => req.ip,
  peer: (req: RequestLike) => req.socket?.remoteAddress,
  headers: (req: RequestLike) => req.headers,
  // the app holding the trust-proxy setting: Express's on platform-express, Fastify's instance
  // on platform-fastify
  trust: (req: RequestLike) => {
    const { app, server } = req as { app?: unknown; server?: unknown }
    if (app !== undefined) return { framework: 'express' as const, app }
    return server === undefined ? undefined : { framework: 'fastify' as const, app: server }
  },
}
/** The warning's code: `--disable-warning=LIMITER_NEST_LIMITS_REPLACED` silences it. */
export const LIMITS_REPLACED = 'LIMITER_NEST_LIMITS_REPLACED'

const namesOf = (limits: unknown): string[] =>
  Array.isArray(limits)
    ? limits.flatMap((p: unknown) => {
        const name = (p as { name?: unknown } | null)?.name
        return typeof name === 'string' ? [name] : []
      })
    : []

/**
 * Warns when a decorator's `limits` name some of forRoot's named policies but not all of them:
 * `@nestjs/throttler`'s `@Throttle({ short })` overrides `short` and keeps the other throttlers,
 * where a handler's `limits` here replace forRoot's whole set.
 */
function warnDroppedLimits(scope: string, base: unknown, own: unknown): void {
  if (own === base) return
  const kept = namesOf(own)
  const named = namesOf(base)
  const dropped = named.filter((name) => !kept.includes(name))
  if (dropped.length === 0 || dropped.length === named.length) return
  const list = dropped.map((name) => JSON.stringify(name)).join(', ')
  process.emitWarning(
    `LimiterModule: @RateLimit of ${scope} names some of forRoot's limits but not ${list}. A handler's \`limits\` replace forRoot's whole set (@nestjs/throttler's @Throttle overrides the throttlers it names and keeps the others), so ${list} no longer ${dropped.length === 1 ? 'applies' : 'apply'} to it. List every policy the handler keeps in its \`limits\`. Silence it with --disable-warning=${LIMITS_REPLACED}.`,
    { type: 'LimiterWarning', code: LIMITS_REPLACED },
  )
}

const resolve = (options: RateLimitOptions<RequestLike, OnLimited>): Resolved =>
  resolveRateLimitOptions(options, SPEC)

/**
 * The limiters of one `LimiterModule`, built from its options (validated here, so a bad option
 * fails the app's start naming it). Without `store` or `redis`, every limiter of the module
 * counts in one MemoryStore of its own (names keep their counters apart), closed with the app.
 */
export class LimiterRegistry {
  readonly #defaults: Options
  readonly #global: Resolved | undefined
  readonly #ownStore: MemoryStore | undefined
  readonly #handlers = new WeakMap<object, Map<unknown, HandlerLimit | null>>()
  // Requests already checked: a guard registered both globally and on a controller counts once.
  readonly #checked = new WeakSet<object>()

  constructor(given: unknown) {
    if (Array.isArray(given))
      throw new LimiterTypeError(
        'LimiterModule options',
        given,
        "an object: @nestjs/throttler's list of throttlers is `forRoot({ limits: [{ name, limit, window }] })` here",
      )
    const options = optionsObject('LimiterModule options', given ?? {}) as Options
    const own = options.store === undefined && options.redis === undefined
    this.#ownStore = own ? new MemoryStore() : undefined
    const all: Options = own ? { ...options, store: this.#ownStore } : options
    const { name: _name, ...defaults } = all
    this.#defaults = defaults
    try {
      const policy = all.limit !== undefined || all.limits !== undefined
      this.#global = policy ? resolve(all as RateLimitOptions<RequestLike, OnLimited>) : undefined
      if (!policy) resolve(probeOf(all))
    } catch (error) {
      void this.#ownStore?.close()
      throw error
    }
  }

  /** The limiter of `handler` in `controller`, or null when it is not limited. */
  handler(controller: Target, handler: Target, reflector: Reflector): HandlerLimit | null {
    let handlers = this.#handlers.get(controller)
    if (handlers === undefined) {
      handlers = new Map()
      this.#handlers.set(controller, handlers)
    }
    let found = handlers.get(handler)
    if (found === undefined) {
      // not cached when it throws: a bad @RateLimit fails each of its requests, naming itself
      found = this.#build(controller, handler, reflector)
      handlers.set(handler, found)
    }
    return found
  }

  /** True the second time the same request is checked (the guard bound twice). */
  seen(req: object): boolean {
    if (this.#checked.has(req)) return true
    this.#checked.add(req)
    return false
  }

  #build(controller: Target, handler: Target, reflector: Reflector): HandlerLimit | null {
    const targets = [handler, controller] as never[]
    if (reflector.getAllAndOverride<boolean | undefined>(SKIP_RATE_LIMIT, targets) === true)
      return null
    const own = reflector.get<unknown>(RATE_LIMIT, handler as never)
    const shared = reflector.get<unknown>(RATE_LIMIT, controller as never)
    if (own === undefined && shared === undefined)
      return this.#global === undefined ? null : { rl: this.#global, scope: '' }
    const scope = `${controller.name}.${handler.name}`
    try {
      let options: Options = this.#defaults
      if (shared !== undefined) options = withDefaults(options, shared, 'RateLimit')
      if (own !== undefined) options = withDefaults(options, own, 'RateLimit')
      const rl = resolve(options as RateLimitOptions<RequestLike, OnLimited>)
      warnDroppedLimits(scope, this.#defaults.limits, options.limits)
      return { rl, scope }
    } catch (error) {
      if (error instanceof Error) error.message += ` (@RateLimit of ${scope})`
      throw error
    }
  }

  /**
   * On `app.close()`, once the server has stopped: waits for the releases and refunds in flight
   * (a concurrency lease given back as a response finished), so a Redis client quit after
   * `app.close()` leaves none behind; then closes the MemoryStore the module made. It waits for
   * every limiter of the process (`closeLimiters()`): `limits` as a function builds limiters per
   * request, which no registry holds.
   */
  async onApplicationShutdown(): Promise<void> {
    await closeLimiters()
    await this.#ownStore?.close()
  }
}
