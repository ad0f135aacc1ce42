// Two limiters on one request with single-valued header sets (draft-6, legacy): the
// response holds one limiter's set, whole, on the Fetch kit (the inner limiter writes first) and
// on Node's kit (the outer one writes first) alike. A fail-open decision's set has no remaining
// and no reset, a concurrency one's no reset: neither may leave a field of its own beside another
// limiter's, such as `RateLimit-Limit: 100` with the 5-limit's `RateLimit-Remaining: 4`.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFetchLimiter, type FetchLimiterOptions } from '../src/fetch/index.js'
import {
  type HeaderStandard,
  type RateLimitOptions,
  resolveRateLimitOptions,
  settleCheck,
  withCheck,
} from '../src/http/index.js'
import type { Store } from '../src/index.js'

// Options with no callbacks, for either host.
type Options = RateLimitOptions<IncomingMessage>

// A store whose every call fails: with the default failureMode the limiter fails open.
const down = (): Store => {
  const fail = () => Promise.reject(new Error('down'))
  return { consume: fail, refund: fail, reset: fail } as unknown as Store
}
const failingOpen = (headers: HeaderStandard): Options => ({
  limit: 100,
  window: '1m',
  headers,
  store: down(),
  onError: () => {},
})
const route = (headers: HeaderStandard): Options => ({ limit: 5, window: '15m', headers })
const inFlight = (headers: HeaderStandard): Options => ({
  algorithm: 'concurrency',
  limit: 2,
  window: '1m',
  headers,
})
const hourly = (headers: HeaderStandard): Options => ({ limit: 100, window: '1h', headers })

// The Fetch kit: the outer limiter decorates the response after the inner one.
async function viaFetch(outer: Options, inner: Options): Promise<Headers> {
  const [a, b] = [outer, inner].map((o) => createFetchLimiter(o as FetchLimiterOptions))
  const ip = { ip: '203.0.113.7' }
  const handler = async () => new Response('ok')
  const request = new Request('http://app.test/x')
  const res = await a!.handle(request, () => b!.handle(request, handler, ip), ip)
  await res.text()
  return res.headers
}

// Node's kit as an adapter uses it: each limiter writes into the response before the next runs.
type Middleware = (req: IncomingMessage, res: ServerResponse, next: () => void) => void
function nodeLimiter(options: Options): Middleware {
  const rl = resolveRateLimitOptions(options, {
    ip: (req) => req.socket.remoteAddress,
  })
  return (req, res, next) => {
    void withCheck(
      rl,
      req,
      '',
      (check) => {
        if (check === undefined || check.denied) return next()
        if (settleCheck(rl, check, res, res) === 'proceed') next()
        else res.writeHead(429).end()
      },
      (error) => res.writeHead(500).end(String(error)),
    )
  }
}

let base = ''
let chain: Middleware[] = []
const server = createServer((req, res) => {
  const run = (i: number): void => {
    const step = chain[i]
    if (step === undefined) res.end('ok')
    else step(req, res, () => run(i + 1))
  }
  run(0)
})
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

async function viaNode(outer: Options, inner: Options): Promise<Headers> {
  chain = [nodeLimiter(outer), nodeLimiter(inner)]
  const res = await fetch(`${base}/x`)
  await res.text()
  return res.headers
}

// The single-valued set of a response, with the reset only said to be there or not (legacy's
// is an instant).
function group(headers: Headers, standard: HeaderStandard) {
  const p = standard === 'legacy' ? 'x-ratelimit-' : 'ratelimit-'
  return {
    limit: headers.get(`${p}limit`),
    remaining: headers.get(`${p}remaining`),
    reset: headers.get(`${p}reset`) !== null,
  }
}
const full = (limit: number, remaining: number) => ({
  limit: String(limit),
  remaining: String(remaining),
  reset: true,
})

const HOSTS = [
  ['Fetch', viaFetch],
  ['Node', viaNode],
] as const
// (draft-7's set is one field, `RateLimit`, replaced whole: it never mixed two limiters)
const STANDARDS: readonly HeaderStandard[] = ['draft-6', 'legacy']

describe('single-valued header sets from two limiters', () => {
  for (const [host, via] of HOSTS)
    for (const standard of STANDARDS) {
      it(`${host} ${standard}: a fail-open limiter, outer or inner, leaves the counted one's set whole`, async () => {
        // the 5-per-15-minutes route's set, with its own reset
        const expected = full(5, 4)
        expect(group(await via(failingOpen(standard), route(standard)), standard)).toEqual(expected)
        expect(group(await via(route(standard), failingOpen(standard)), standard)).toEqual(expected)
      })

      it(`${host} ${standard}: a concurrency limiter and a rate limit send one of the two sets, whole`, async () => {
        const outer = group(await via(inFlight(standard), hourly(standard)), standard)
        const inner = group(await via(hourly(standard), inFlight(standard)), standard)
        // the concurrency set has no reset, and a merge cannot remove the rate limit's: the
        // rate limit's set, whole, wherever the concurrency limiter stands
        expect(outer).toEqual(full(100, 99))
        expect(inner).toEqual(full(100, 99))
      })
    }
})
