// Next 16's proxy (formerly middleware), on the Node runtime: 2 requests a minute per client for
// everything under /api/limited. The handler runs after the proxy has answered, so a concurrency
// limit here would be released at once: limit rates here, concurrency in the route handler.
import { createFetchLimiter } from '@limiter/core/fetch'
import { type NextRequest, NextResponse } from 'next/server'

// one per server process; pass `redis` to share the counters between processes, with a `name`
// (say 'site') apart from the route handlers' names, or equal numbers would share one counter;
// trustProxy: 1 (the number of proxies in front): the right-most X-Forwarded-For entry, which is
// the client's only when a proxy of yours appends it (a client can send its own to `next start`)
const limit = createFetchLimiter({ limit: 2, window: '1m', trustProxy: 1 })

export function proxy(request: NextRequest): Promise<Response> {
  return limit.handle(request, async () => NextResponse.next())
}

export const config = { matcher: '/api/limited/:path*' }
