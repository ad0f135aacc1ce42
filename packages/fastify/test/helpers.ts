// Test helpers: both Fastify majors, a refund-counting store, and an app with one limited route.
import { MemoryStore, type Store, type StoreCall } from '@limiter/core'
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import fastify4 from 'fastify4'
import fastify5 from 'fastify5'
import { type RateLimitPluginOptions, rateLimit } from '../src/index.js'

/** Every Fastify major the plugin claims, by name. */
export const FASTIFY = [
  { version: 'fastify 4', fastify: fastify4 },
  { version: 'fastify 5', fastify: fastify5 },
] as const

/** A Fastify factory. */
export type Factory = (typeof FASTIFY)[number]['fastify']

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

/** Resolves once `check()` is true, or fails after `timeoutMs`. */
export async function until(check: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 5))
  }
}

/**
 * An app with the plugin registered and `GET /` answering 200 (or `?status=`) with
 * `request.rateLimit`.
 */
export async function appWith(
  fastify: Factory,
  options: RateLimitPluginOptions,
  serverOptions?: FastifyServerOptions,
): Promise<FastifyInstance> {
  const app = fastify(serverOptions)
  await app.register(rateLimit, options)
  app.get<{ Querystring: { status?: string } }>('/', async (request, reply) => {
    reply.code(Number(request.query.status ?? 200))
    return { ok: true, rateLimit: request.rateLimit }
  })
  return app
}
