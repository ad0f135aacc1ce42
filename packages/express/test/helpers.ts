// Test helpers: both Express majors, a refund-counting store, and an error handler that shows errors.
import { MemoryStore, type Store, type StoreCall } from '@limiter/core'
import type { ErrorRequestHandler, Express } from 'express'
import express4 from 'express4'
import express5 from 'express5'
import { type RateLimitOptions, rateLimit } from '../src/index.js'

/** Every Express major the adapter claims, by name. */
export const EXPRESS = [
  { version: 'express 4', express: express4 },
  { version: 'express 5', express: express5 },
] as const

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

/** Sends errors as JSON so tests can read their message and code. */
export const showErrors: ErrorRequestHandler = (
  err: Error & { code?: string },
  _req,
  res,
  _next,
) => {
  res.status(500).json({ message: err.message, code: err.code })
}

/** Resolves once `check()` is true, or fails after `timeoutMs`. */
export async function until(check: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 5))
  }
}

/** An app with one limiter in front of a handler that answers 200 (or `?status=`) with `req.rateLimit`. */
export function appWith(
  express: (typeof EXPRESS)[number]['express'],
  options: RateLimitOptions,
): Express {
  const app = express()
  app.use(rateLimit(options))
  app.all('/', (req, res) => {
    res.status(Number(req.query.status ?? 200)).json({ ok: true, rateLimit: req.rateLimit })
  })
  app.use(showErrors)
  return app
}
