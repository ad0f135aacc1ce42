// A route handler behind withRateLimit: 3 requests a minute per client, keyed by the right-most
// X-Forwarded-For entry (trustProxy: 1, the default of withRateLimit): the client's address when
// a proxy of yours stands in front and appends it (Vercel, a load balancer). `next start` alone
// fills the header from the socket only when a request has none, so exposed directly a client
// picks its key by sending one; off Vercel the limiter says so once (LIMITER_TRUST_PROXY_DEFAULT).
// Behind your proxy, pass `trustProxy: 1` (the number of proxies) to say it is there.
import { withRateLimit } from '@limiter/core/fetch'
import type { NextRequest } from 'next/server'

// run on every request (never prerendered at build time)
export const dynamic = 'force-dynamic'

export const GET = withRateLimit(
  async (request: NextRequest) =>
    Response.json({ hello: request.nextUrl.searchParams.get('name') }),
  { limit: 3, window: '1m' },
)
