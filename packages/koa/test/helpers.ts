// Test helpers: both Koa majors, both @koa/router majors, a refund-counting store, and an error
// handler that shows errors.
import Router from '@koa/router'
import { MemoryStore, type Store, type StoreCall } from '@limiter/core'
import type Koa from 'koa'
import type { Middleware } from 'koa'
import Router12 from 'koa-router12'
import koa2 from 'koa2'
import koa3 from 'koa3'
import { type RateLimitOptions, rateLimit } from '../src/index.js'

/** Every Koa major the adapter claims, by name. */
export const KOA = [
  { version: 'koa 2', Koa: koa2 },
  { version: 'koa 3', Koa: koa3 },
] as const

/** Every @koa/router major the route scopes are tested with, by name. */
export const ROUTERS: ReadonlyArray<{ readonly router: string; readonly Router: typeof Router }> = [
  { router: '@koa/router 12', Router: Router12 },
  { router: '@koa/router 15', Router },
]

/** Each Koa major with each router major. */
export const KOA_ROUTERS = KOA.flatMap((k) => ROUTERS.map((r) => ({ ...k, ...r })))

/** A store that counts what it was asked. */
export interface CountingStore extends Store {
  consumes: number
  refunds: number
  keys: string[]
}

/** A store that delegates to `inner` and counts consumes and refunds. */
export function countingStore(inner: Store = new MemoryStore()): CountingStore {
  const store: CountingStore = {
    consumes: 0,
    refunds: 0,
    keys: [],
    local: inner.local === true,
    consume(call: StoreCall) {
      store.consumes++
      store.keys.push(call.key)
      return inner.consume(call)
    },
    refund(call: StoreCall) {
      store.refunds++
      return inner.refund(call)
    },
    reset: (call: Omit<StoreCall, 'cost'>) => inner.reset(call),
  }
  return store
}

/** Answers errors from downstream as JSON (500) so tests can read their message and code. */
export const showErrors: Middleware = async (ctx, next) => {
  try {
    await next()
  } catch (error) {
    const { message, code } = error as Error & { code?: string }
    ctx.status = 500
    ctx.body = { message, code }
  }
}

/** Resolves once `check()` is true, or fails after `timeoutMs`. */
export async function until(check: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 5))
  }
}

/** Lets refunds (fired on `finish`) reach the store. */
export const settle = () => new Promise((r) => setTimeout(r, 20))

/** An app with one limiter in front of a handler that answers 200 (or `?status=`) with `ctx.state.rateLimit`. */
export function appWith(Koa: (typeof KOA)[number]['Koa'], options: RateLimitOptions): Koa {
  const app = new Koa()
  app.use(showErrors)
  app.use(rateLimit(options))
  app.use((ctx) => {
    ctx.status = Number(ctx.query.status ?? 200)
    ctx.body = { ok: true, rateLimit: ctx.state.rateLimit }
  })
  return app
}
