// Test helpers: both Express majors, a refund-counting store, an error handler that shows errors,
// and the harness that runs the shared adapter contract on Express.
import { MemoryStore, type Store } from '@limiter/core'
import type { ErrorRequestHandler, Express, Request } from 'express'
import express4 from 'express4'
import express5 from 'express5'
import request from 'supertest'
import { type AdapterHarness, type Send, thrownBy } from '../../../test-support/adapter-contract.js'
import {
  type CountingStore as Counting,
  countingStore as counting,
  served,
} from '../../../test-support/adapter-helpers.js'
import { handlerProbe } from '../../../test-support/harness.js'
import { type RateLimitOptions, rateLimit } from '../src/index.js'

/** Every Express major the adapter claims, by name. */
export const EXPRESS = [
  { version: 'express 4', express: express4 },
  { version: 'express 5', express: express5 },
] as const

/** An Express factory. */
export type Factory = (typeof EXPRESS)[number]['express']

/** A store that counts what it was asked. */
export type CountingStore = Counting<Store>

/** A store that delegates to `inner` and counts consumes and refunds. */
export const countingStore = (inner: Store = new MemoryStore()): CountingStore => counting(inner)

/** Sends errors as JSON so tests can read their message and code. */
export const showErrors: ErrorRequestHandler = (
  err: Error & { code?: string },
  _req,
  res,
  _next,
) => {
  res.status(500).json({ message: err.message, code: err.code })
}

/** An app with one limiter in front of a handler that answers 200 (or `?status=`) with `req.rateLimit`. */
export function appWith(express: Factory, options: RateLimitOptions): Express {
  const app = express()
  app.use(rateLimit(options))
  app.all('/', (req, res) => {
    res.status(Number(req.query.status ?? 200)).json({ ok: true, rateLimit: req.rateLimit })
  })
  app.use(showErrors)
  return app
}

/** Sends requests to `app` through supertest. */
export const sender =
  (app: Express): Send =>
  async (path, headers = {}) => {
    const res = await request(app).get(path).set(headers)
    return { status: res.status, headers: res.headers, body: res.text }
  }

/** The shared adapter contract's view of Express `express`. */
export function harness(express: Factory): AdapterHarness {
  return {
    app: (options) => sender(appWith(express, options as unknown as RateLimitOptions)),
    async listen(options) {
      const probe = handlerProbe()
      const app = express()
      app.use(rateLimit(options as unknown as RateLimitOptions))
      app.use((_req, _res, next) => {
        probe.started()
        next()
      })
      app.get('/', (_req, res) => {
        res.send('ok')
      })
      app.get('/slow', (_req, res) => {
        void probe.slow(() => {
          res.send('late')
        })
      })
      app.get('/fail', () => {
        throw new Error('the handler failed')
      })
      return probe.listening(await served(app.listen(0, '127.0.0.1')))
    },
    store: () => new MemoryStore(),
    // Middleware: a bad option throws synchronously, where rateLimit() is called.
    optionErrors: (options) => thrownBy(() => rateLimit(options as unknown as RateLimitOptions)),
    callbacks: {
      denyBanned: (req: Request) => req.get('x-banned') === 'yes',
      skipInternal: (req: Request) => req.get('x-internal') === 'yes',
      costFromQuery: (req: Request) => Number(req.query.cost ?? 1),
      pathMessage: (req: Request) => ({ path: req.path }),
    },
  }
}
