// Test support: the shared adapter contracts' view of @limiter/core/fetch's createFetchLimiter,
// served by a Fetch-API server (srvx, @hono/node-server) that hands over the client address.
import { runningCounter } from './adapter-helpers.js'
import type { AdapterHarness, ContractOptions, Reply } from './harness.js'

/** A listening Fetch server: `fetch(request, ip)` answers each request. */
export type ServeFetch = (
  fetch: (request: Request, ip: string | undefined) => Promise<Response>,
) => Promise<{ url: string; close(): Promise<void> }>

interface FetchLimiterLike {
  handle(
    request: Request,
    next: () => Promise<Response>,
    extras?: { ip?: string | undefined; decided?: (decision: unknown) => void },
  ): Promise<Response>
}

const query = (request: Request, name: string) => new URL(request.url).searchParams.get(name)

// The contracts write `limits` for a request with `headers` as a record: this is that view.
function forFetch(options: ContractOptions): ContractOptions {
  const { limits } = options
  if (typeof limits !== 'function') return options
  const choose = limits as (req: { headers: Record<string, string> }) => unknown
  return { ...options, limits: (r: Request) => choose({ headers: Object.fromEntries(r.headers) }) }
}

async function get(url: string, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await fetch(url, { headers })
  return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() }
}

/**
 * The harness for `createFetchLimiter` on the server `serve` starts: the handler answers
 * `{ ok, rateLimit }` (the decision from `extras.decided`), errors answer 500 as JSON.
 */
export function fetchHarness(
  createFetchLimiter: (options: never) => FetchLimiterLike,
  serve: ServeFetch,
  store: () => ReturnType<AdapterHarness['store']>,
): AdapterHarness {
  const create = (options: ContractOptions) => createFetchLimiter(forFetch(options) as never)
  return {
    async app(options) {
      const limit = create(options)
      const { url } = await serve(async (request, ip) => {
        let rateLimit: unknown
        const status = Number(query(request, 'status') ?? 200)
        try {
          return await limit.handle(
            request,
            async () => Response.json({ ok: true, rateLimit }, { status }),
            { ip, decided: (d) => (rateLimit = d) },
          )
        } catch (error) {
          const { message, code } = error as Error & { code?: string }
          return Response.json({ message, code }, { status: 500 })
        }
      })
      return (path, headers) => get(`${url}${path}`, headers)
    },
    async listen(options) {
      let finished = 0
      const starts: number[] = []
      const running = runningCounter()
      const limit = create(options)
      const handler = async (request: Request): Promise<Response> => {
        starts.push(performance.now())
        const path = new URL(request.url).pathname
        if (path === '/fail') throw new Error('the handler failed')
        if (path !== '/slow') return new Response('ok')
        running.start()
        await new Promise((r) => setTimeout(r, 400))
        running.stop()
        finished++
        return new Response('late')
      }
      const served = await serve((request, ip) =>
        limit
          .handle(request, () => handler(request), { ip })
          .catch(() => new Response('failed', { status: 500 })),
      )
      return {
        ...served,
        finishedCount: () => finished,
        handlerStarts: () => starts,
        peakRunning: () => running.peak,
      }
    },
    store,
    optionErrors: (options) => {
      try {
        create(options)
      } catch (error) {
        return [error]
      }
      return [undefined]
    },
    callbacks: {
      denyBanned: (r: Request) => r.headers.get('x-banned') === 'yes',
      skipInternal: (r: Request) => r.headers.get('x-internal') === 'yes',
      costFromQuery: (r: Request) => Number(query(r, 'cost') ?? 1),
      pathMessage: (r: Request) => ({ path: new URL(r.url).pathname }),
    },
  }
}
