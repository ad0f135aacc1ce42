// Test helpers: both Fastify majors, a refund-counting store, an app with one limited route, and
// the harness that runs the shared adapter contract on Fastify.
import type { AddressInfo } from 'node:net'
import { MemoryStore, type Store } from '@limiter/core'
import type { FastifyInstance, FastifyRequest, FastifyServerOptions } from 'fastify'
import fastify4 from 'fastify4'
import fastify5 from 'fastify5'
import type { AdapterHarness } from '../../../test-support/adapter-contract.js'
import {
  type CountingStore as Counting,
  countingStore as counting,
} from '../../../test-support/adapter-helpers.js'
import { handlerProbe } from '../../../test-support/harness.js'
import { type RateLimitPluginOptions, rateLimit } from '../src/index.js'

/** Every Fastify major the plugin claims, by name. */
export const FASTIFY = [
  { version: 'fastify 4', fastify: fastify4 },
  { version: 'fastify 5', fastify: fastify5 },
] as const

/** A Fastify factory. */
export type Factory = (typeof FASTIFY)[number]['fastify']

/** A store that counts what it was asked. */
export type CountingStore = Counting<Store>

/** A store that delegates to `inner` and counts consumes and refunds. */
export const countingStore = (inner: Store = new MemoryStore()): CountingStore => counting(inner)

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

/**
 * The errors registering the plugin with `options` gives, one per way the app can start:
 * awaiting register, then ready, then listen.
 */
export async function registerErrors(fastify: Factory, options: unknown): Promise<unknown[]> {
  const errors: unknown[] = []
  for (const start of ['register', 'ready', 'listen'] as const) {
    const app = fastify()
    const registered = app.register(rateLimit, options as RateLimitPluginOptions)
    errors.push(
      await (start === 'register'
        ? registered
        : start === 'ready'
          ? app.ready()
          : app.listen({ port: 0, host: '127.0.0.1' })
      ).then(
        () => undefined,
        (e: unknown) => e,
      ),
    )
    await app.close().catch(() => {})
  }
  return errors
}

/** The shared adapter contract's view of Fastify `fastify`. */
export function harness(fastify: Factory): AdapterHarness {
  return {
    async app(options) {
      const app = await appWith(fastify, options as RateLimitPluginOptions)
      return async (url, headers = {}) => {
        const res = await app.inject({ url, headers })
        return { status: res.statusCode, headers: res.headers, body: res.body }
      }
    },
    async listen(options) {
      const probe = handlerProbe()
      const app = fastify({ forceCloseConnections: true })
      await app.register(rateLimit, options as RateLimitPluginOptions)
      // after the limiter's hook, whichever it runs in: the handler is about to run
      app.addHook('preHandler', async () => {
        probe.started()
      })
      app.get('/', async () => 'ok')
      app.get('/slow', async () => {
        await probe.slow()
        return 'late'
      })
      app.get('/fail', async () => {
        throw new Error('the handler failed')
      })
      await app.listen({ port: 0, host: '127.0.0.1' })
      return probe.listening({
        url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
        close: () => app.close(),
      })
    },
    store: () => new MemoryStore(),
    optionErrors: (options) => registerErrors(fastify, options),
    callbacks: {
      denyBanned: (request: FastifyRequest) => request.headers['x-banned'] === 'yes',
      skipInternal: (request: FastifyRequest) => request.headers['x-internal'] === 'yes',
      costFromQuery: (request: FastifyRequest) =>
        Number((request.query as { cost?: string }).cost ?? 1),
      pathMessage: (request: FastifyRequest) => ({ path: request.url }),
    },
  }
}
