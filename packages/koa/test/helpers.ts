// Test helpers: both Koa majors, both @koa/router majors, a refund-counting store, an error
// handler that shows errors, and the harness that runs the shared adapter contract on Koa.
import Router from '@koa/router'
import { MemoryStore, type Store } from '@limiter/core'
import type Koa from 'koa'
import type { Context, Middleware } from 'koa'
import Router12 from 'koa-router12'
import koa2 from 'koa2'
import koa3 from 'koa3'
import request from 'supertest'
import { type AdapterHarness, thrownBy } from '../../../test-support/adapter-contract.js'
import {
  type CountingStore as Counting,
  countingStore as counting,
  served,
} from '../../../test-support/adapter-helpers.js'
import { handlerProbe } from '../../../test-support/harness.js'
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
export type CountingStore = Counting<Store>

/** A store that delegates to `inner` and counts consumes and refunds. */
export const countingStore = (inner: Store = new MemoryStore()): CountingStore => counting(inner)

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

/** The shared adapter contract's view of Koa `Koa`. */
export function harness(Koa: (typeof KOA)[number]['Koa']): AdapterHarness {
  return {
    app(options) {
      const handler = appWith(Koa, options as unknown as RateLimitOptions).callback()
      return async (path, headers = {}) => {
        const res = await request(handler).get(path).set(headers)
        return { status: res.status, headers: res.headers, body: res.text }
      }
    },
    async listen(options) {
      const probe = handlerProbe()
      const app = new Koa()
      const router = new Router()
      app.silent = true
      app.use(rateLimit(options as unknown as RateLimitOptions))
      app.use((_ctx, next) => {
        probe.started()
        return next()
      })
      router.get('/', (ctx) => {
        ctx.body = 'ok'
      })
      router.get('/slow', async (ctx) => {
        await probe.slow(() => {
          ctx.body = 'late'
        })
      })
      router.get('/fail', async () => {
        throw new Error('the handler failed')
      })
      app.use(router.routes())
      return probe.listening(await served(app.listen(0, '127.0.0.1')))
    },
    store: () => new MemoryStore(),
    // Middleware: a bad option throws synchronously, where rateLimit() is called.
    optionErrors: (options) => thrownBy(() => rateLimit(options as unknown as RateLimitOptions)),
    callbacks: {
      denyBanned: (ctx: Context) => ctx.get('x-banned') === 'yes',
      skipInternal: (ctx: Context) => ctx.get('x-internal') === 'yes',
      costFromQuery: (ctx: Context) => Number(ctx.query.cost ?? 1),
      pathMessage: (ctx: Context) => ({ path: ctx.path }),
    },
  }
}
