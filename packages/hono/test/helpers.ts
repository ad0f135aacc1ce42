// Test helpers: Hono apps on real listening @hono/node-server servers, and the harness that runs
// the shared adapter contracts on Hono.
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { MemoryStore } from '@limiter/core'
import { type Context, Hono } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { afterAll } from 'vitest'
import {
  type AdapterHarness,
  type ContractOptions,
  type Reply,
  thrownBy,
} from '../../../test-support/adapter-contract.js'
import { runningCounter } from '../../../test-support/adapter-helpers.js'
import { type RateLimitOptions, rateLimit } from '../src/index.js'

/** A server listening on 127.0.0.1: its base URL and how to stop it. */
export interface Served {
  readonly url: string
  close(): Promise<void>
}

const open = new Set<Served>()
// every server a test file started and left open stops with the file
afterAll(async () => {
  await Promise.all([...open].map((s) => s.close()))
})

/** Serves `app` with @hono/node-server on a free port of 127.0.0.1. */
export async function listen(app: Hono): Promise<Served> {
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' })
  if (!server.listening) await new Promise((resolve) => server.once('listening', resolve))
  const served: Served = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      open.delete(served)
      if ('closeAllConnections' in server) server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
  open.add(served)
  return served
}

/** `GET url` with `headers`: status, headers (lower-case names) and body text. */
export async function get(url: string, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await fetch(url, { headers })
  return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() }
}

/** Answers errors as JSON (500) so tests can read their message and code. */
export function showErrors(app: Hono): Hono {
  app.onError((error, c) => {
    const { message, code } = error as Error & { code?: string }
    return c.json({ message, code }, 500)
  })
  return app
}

// The contracts write callbacks for a request with `headers` as a record (Koa's, Express's); a
// Hono limiter's callbacks see the context: `limits` gets that view of it.
function forHono(options: ContractOptions): RateLimitOptions {
  const { limits } = options
  if (typeof limits !== 'function') return options as unknown as RateLimitOptions
  const choose = limits as (req: { headers: Record<string, string> }) => unknown
  return {
    ...options,
    limits: (c: Context) => choose({ headers: Object.fromEntries(c.req.raw.headers) }),
  } as unknown as RateLimitOptions
}

/** An app with one limiter in front of a handler that answers `{ ok, rateLimit }` (or `?status=`). */
export function appWith(options: RateLimitOptions): Hono {
  const app = showErrors(new Hono())
  app.use(rateLimit(options))
  app.get('*', (c) =>
    c.json(
      { ok: true, rateLimit: c.get('rateLimit') },
      Number(c.req.query('status') ?? 200) as ContentfulStatusCode,
    ),
  )
  return app
}

/** The shared adapter contracts' view of Hono on @hono/node-server. */
export function harness(): AdapterHarness {
  return {
    async app(options) {
      const { url } = await listen(appWith(forHono(options)))
      return (path, headers) => get(`${url}${path}`, headers)
    },
    async listen(options) {
      let finished = 0
      const starts: number[] = []
      const running = runningCounter()
      const app = new Hono()
      app.use(rateLimit(forHono(options)))
      app.use(async (_c, next) => {
        starts.push(performance.now())
        await next()
      })
      app.get('/', (c) => c.text('ok'))
      app.get('/slow', async (c) => {
        running.start()
        await new Promise((r) => setTimeout(r, 400))
        running.stop()
        finished++
        return c.text('late')
      })
      app.get('/fail', () => {
        throw new Error('the handler failed')
      })
      app.onError((_error, c) => c.text('failed', 500))
      return {
        ...(await listen(app)),
        finishedCount: () => finished,
        handlerStarts: () => starts,
        peakRunning: () => running.peak,
      }
    },
    store: () => new MemoryStore(),
    optionErrors: (options) => thrownBy(() => rateLimit(options as unknown as RateLimitOptions)),
    callbacks: {
      denyBanned: (c: Context) => c.req.header('x-banned') === 'yes',
      skipInternal: (c: Context) => c.req.header('x-internal') === 'yes',
      costFromQuery: (c: Context) => Number(c.req.query('cost') ?? 1),
      pathMessage: (c: Context) => ({ path: c.req.path }),
    },
  }
}
