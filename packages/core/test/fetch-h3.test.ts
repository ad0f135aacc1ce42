// @limiter/core/fetch in an h3 v2 app on a real server (h3's `serve`, srvx on Node): a
// middleware around every route (the handler's value turned into a Response with `toResponse`),
// a `defineHandler` of its own, the client address from `getRequestIP`, then over the wire.
import { defineHandler, getRequestIP, H3, serve, toResponse } from 'h3'
import { afterEach, describe, expect, it } from 'vitest'
import { createFetchLimiter } from '../src/fetch/index.js'
import { MemoryStore } from '../src/index.js'

let close: (() => Promise<void>) | undefined
afterEach(async () => {
  await close?.()
  close = undefined
})

async function served(app: H3): Promise<string> {
  const server = serve(app, { port: 0, hostname: '127.0.0.1', silent: true })
  await server.ready()
  close = () => server.close(true)
  return (server.url as string).replace(/\/$/, '')
}

function appWithMiddleware(seen: (string | undefined)[]): H3 {
  const limit = createFetchLimiter({
    limit: 2,
    window: '1m',
    store: new MemoryStore(),
    trustProxy: 1,
  })
  const app = new H3()
  app.use((event, next) => {
    const ip = getRequestIP(event)
    seen.push(ip)
    return limit.handle(event.req, async () => toResponse(await next(), event), {
      ip,
      waitUntil: event.req.waitUntil,
    })
  })
  app.get('/hello', () => ({ hello: 'h3' }))
  return app
}

describe('createFetchLimiter on h3 v2', () => {
  it('a middleware: 200s with headers, a 429 with Retry-After, keyed per client', async () => {
    const seen: (string | undefined)[] = []
    const url = await served(appWithMiddleware(seen))
    const first = await fetch(`${url}/hello`)
    expect(first.status).toBe(200)
    expect(await first.json()).toEqual({ hello: 'h3' })
    expect(first.headers.get('ratelimit')).toBe('"gc2/1m";r=1;t=30')
    expect((await fetch(`${url}/hello`)).status).toBe(200)
    const refused = await fetch(`${url}/hello`)
    expect(refused.status).toBe(429)
    expect(refused.headers.get('content-type')).toBe('application/problem+json')
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(refused.headers.get('ratelimit-policy')).toBe('"gc2/1m";q=2;w=60')
    // the socket's address from getRequestIP (srvx's request.ip)
    expect(seen).toEqual(['127.0.0.1', '127.0.0.1', '127.0.0.1'])
    // trustProxy: 1, one proxy in front: the entry it appended is another client
    const other = await fetch(`${url}/hello`, { headers: { 'x-forwarded-for': '203.0.113.4' } })
    expect(other.status).toBe(200)
    expect(other.headers.get('ratelimit')).toMatch(/^"gc2\/1m";r=1;/)
  })

  it('a defineHandler of its own, limited alone', async () => {
    const limit = createFetchLimiter({ limit: 1, window: '1m', store: new MemoryStore() })
    const app = new H3()
    app.get('/free', () => 'free')
    app.post(
      '/login',
      defineHandler((event) =>
        limit.handle(event.req, async () => new Response('welcome'), { ip: getRequestIP(event) }),
      ),
    )
    const url = await served(app)
    const login = await fetch(`${url}/login`, { method: 'POST' })
    expect(login.status).toBe(200)
    expect(await login.text()).toBe('welcome')
    expect((await fetch(`${url}/login`, { method: 'POST' })).status).toBe(429)
    const free = await fetch(`${url}/free`)
    expect(free.status).toBe(200)
    expect(free.headers.get('ratelimit')).toBeNull()
  })
})
