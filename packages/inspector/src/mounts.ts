// The mounts: a few lines per framework converting its request to a Fetch Request and writing
// the Response back. Typed by shape, so no framework is a dependency of this package.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Inspector } from './inspector.js'
import { toRequest, writeResponse } from './node.js'

/** The part of an Express request the mount reads. */
export interface ExpressRequestLike extends IncomingMessage {
  readonly baseUrl: string
  readonly originalUrl: string
  readonly body?: unknown
}

/**
 * Express middleware (4 and 5): `app.use('/ops/limits', expressInspector(page))`. The mount path
 * is Express's `req.baseUrl`; `authorize` receives Express's `req`.
 */
export function expressInspector(
  page: Inspector<ExpressRequestLike>,
): (req: ExpressRequestLike, res: ServerResponse, next: (error?: unknown) => void) => void {
  return (req, res, next) => {
    toRequest(req, req.originalUrl, { body: req.body })
      .then((request) => page.handle(request, { mountPath: req.baseUrl, hostRequest: req }))
      .then((response) => writeResponse(res, response))
      .catch(next)
  }
}

/** The part of a Fastify instance the plugin uses. */
export interface FastifyInstanceLike {
  readonly prefix: string
  removeAllContentTypeParsers(): void
  addContentTypeParser(
    type: string,
    options: { parseAs: 'string' },
    parser: (
      request: unknown,
      body: string,
      done: (error: Error | null, body?: unknown) => void,
    ) => void,
  ): void
  route(options: {
    method: string[]
    url: string
    handler: (request: FastifyRequestLike, reply: FastifyReplyLike) => Promise<unknown>
  }): unknown
}

export interface FastifyRequestLike {
  readonly raw: IncomingMessage
  readonly body?: unknown
}

export interface FastifyReplyLike {
  readonly raw: ServerResponse
  hijack(): unknown
}

/**
 * A Fastify plugin (4 and 5): `app.register(fastifyInspector(page), { prefix: '/ops/limits' })`.
 * It reads bodies as text in its own context (the app's parsers are untouched); `authorize`
 * receives Fastify's `request`.
 */
export function fastifyInspector(
  page: Inspector<FastifyRequestLike>,
): (instance: FastifyInstanceLike, options: unknown, done: (error?: Error) => void) => void {
  return (instance, _options, done) => {
    instance.removeAllContentTypeParsers()
    instance.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, parsed) =>
      parsed(null, body),
    )
    const handler = async (request: FastifyRequestLike, reply: FastifyReplyLike) => {
      const fetchRequest = await toRequest(request.raw, request.raw.url ?? '/', {
        body: request.body,
      })
      const response = await page.handle(fetchRequest, {
        mountPath: instance.prefix,
        hostRequest: request,
      })
      reply.hijack()
      await writeResponse(reply.raw, response)
    }
    const method = ['GET', 'HEAD', 'POST']
    instance.route({ method, url: '/', handler })
    instance.route({ method, url: '/*', handler })
    done()
  }
}

/** The part of a Koa context the middleware uses. */
export interface KoaContextLike {
  readonly req: IncomingMessage
  readonly res: ServerResponse
  readonly path: string
  readonly originalUrl: string
  readonly request: { readonly body?: unknown }
  respond?: boolean
}

/**
 * Koa middleware (2 and 3): `app.use(koaInspector(page, { mountPath: '/ops/limits' }))` answers
 * under `mountPath` and passes anything else on; `authorize` receives Koa's `ctx`.
 */
export function koaInspector(
  page: Inspector<KoaContextLike>,
  options: { readonly mountPath: string },
): (ctx: KoaContextLike, next: () => Promise<unknown>) => Promise<unknown> {
  const mountPath = options.mountPath.replace(/\/+$/, '')
  return async (ctx, next) => {
    if (ctx.path !== mountPath && !ctx.path.startsWith(`${mountPath}/`)) return next()
    const request = await toRequest(ctx.req, ctx.originalUrl, { body: ctx.request.body })
    const response = await page.handle(request, { mountPath, hostRequest: ctx })
    ctx.respond = false
    await writeResponse(ctx.res, response)
  }
}

/** The part of a Hono context the handler uses. */
export interface HonoContextLike {
  readonly req: { readonly raw: Request }
}

/**
 * A Hono handler: `app.all('/ops/limits', h)` and `app.all('/ops/limits/*', h)` with
 * `h = honoInspector(page, { mountPath: '/ops/limits' })`; `authorize` receives Hono's `c`.
 */
export function honoInspector(
  page: Inspector<HonoContextLike>,
  options: { readonly mountPath: string },
): (c: HonoContextLike) => Promise<Response> {
  return (c) => page.handle(c.req.raw, { mountPath: options.mountPath, hostRequest: c })
}
