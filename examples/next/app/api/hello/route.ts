// A route handler behind withRateLimit: 3 requests a minute per client, keyed by the right-most
// X-Forwarded-For entry (trustProxy: 1, the default of withRateLimit): the address Next's server
// took from the socket, or the one your proxy appended.
import { withRateLimit } from '@limiter/core/fetch'
import type { NextRequest } from 'next/server'

// run on every request (never prerendered at build time)
export const dynamic = 'force-dynamic'

export const GET = withRateLimit(
  async (request: NextRequest) =>
    Response.json({ hello: request.nextUrl.searchParams.get('name') }),
  { limit: 3, window: '1m' },
)
