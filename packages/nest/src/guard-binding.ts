// Whether a LimiterGuard runs for the handlers the module limits: bound for the whole app (an
// APP_GUARD provider, or `app.useGlobalGuards`), or with `@UseGuards` on the controller or the
// handler. Handlers limited with no guard to run their limiter are unlimited: say so at start-up.
import { GUARDS_METADATA } from '@nestjs/common/constants'
import type { ApplicationConfig, Reflector } from '@nestjs/core'
import { LimiterGuard } from './guard.js'

/** A route handler the module built a limiter for. */
export interface LimitedHandler {
  readonly controller: { readonly name: string }
  readonly handler: { readonly name: string }
}

/** The warning's code: `--disable-warning=LIMITER_NO_GUARD` silences it. */
export const NO_GUARD = 'LIMITER_NO_GUARD'

// A guard as Nest holds it: a class (`@UseGuards(LimiterGuard)`) or an instance.
function isLimiterGuard(guard: unknown): boolean {
  if (guard instanceof LimiterGuard) return true
  return (
    typeof guard === 'function' &&
    (guard === LimiterGuard || guard.prototype instanceof LimiterGuard)
  )
}

// The guards Nest runs for every route: instances (APP_GUARD providers and useGlobalGuards), and
// the wrappers of request-scoped APP_GUARD providers.
function globallyGuarded(config: ApplicationConfig): boolean {
  if (config.getGlobalGuards().some(isLimiterGuard)) return true
  return config.getGlobalRequestGuards().some((wrapper) => isLimiterGuard(wrapper.metatype))
}

function boundOn(reflector: Reflector, target: object): boolean {
  const guards = reflector.get<unknown>(GUARDS_METADATA, target as never)
  return Array.isArray(guards) && guards.some(isLimiterGuard)
}

/** The limited handlers no LimiterGuard runs for (none when one is bound for the whole app). */
export function unguarded(
  handlers: readonly LimitedHandler[],
  config: ApplicationConfig,
  reflector: Reflector,
): LimitedHandler[] {
  if (handlers.length === 0 || globallyGuarded(config)) return []
  return handlers.filter(
    ({ controller, handler }) => !boundOn(reflector, controller) && !boundOn(reflector, handler),
  )
}

/** Warns once that `handlers` are limited, but no LimiterGuard runs for them. */
export function warnUnguarded(handlers: readonly LimitedHandler[]): void {
  const names = handlers
    .slice(0, 3)
    .map(({ controller, handler }) => `${controller.name}.${handler.name}`)
  const more = handlers.length > 3 ? ` and ${handlers.length - 3} more` : ''
  process.emitWarning(
    `LimiterModule: ${names.join(', ')}${more} ${handlers.length === 1 ? 'has a limit' : 'have limits'} (@RateLimit, or forRoot's policy) but no LimiterGuard runs for ${handlers.length === 1 ? 'it' : 'them'}, so ${handlers.length === 1 ? 'it is' : 'they are'} not limited. Bind the guard for the whole app (\`{ provide: APP_GUARD, useClass: LimiterGuard }\` in a module's providers) or on the controllers (\`@UseGuards(LimiterGuard)\`). Silence it with --disable-warning=${NO_GUARD}.`,
    { type: 'LimiterWarning', code: NO_GUARD },
  )
}
