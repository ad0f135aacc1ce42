// @limiter/core/fetch on a real srvx server (Node adapter): the client address from srvx's
// `request.ip`, headers and refusals over the wire, a lease held by a streamed body, and one
// released when the client goes away mid-stream.
import { type ServerRequest, serve } from 'srvx'
import { afterEach, describe, expect, it } from 'vitest'
import { createFetchLimiter, type FetchLimiterOptions } from '../src/fetch/index.js'
import { MemoryStore } from '../src/index.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
let close: (() => Promise<void>) | undefined
afterEach(async () => {
  await close?.()
  close = undefined
})

// A body that sends a chunk every 50 ms, `chunks` times.
function slowBody(chunks: number): ReadableStream<Uint8Array> {
  let sent = 0
  return new ReadableStream({
    async pull(controller) {
      await sleep(50)
      controller.enqueue(new TextEncoder().encode(String(sent++)))
      if (sent === chunks) controller.close()
    },
  })
}

async function served(options: Omit<FetchLimiterOptions, 'ip'>, seen: string[] = []) {
  const limit = createFetchLimiter({
    ...options,
    ip: (request) => {
      const { ip } = request as ServerRequest
      if (ip !== undefined) seen.push(ip)
      return ip
    },
  })
  const server = serve({
    port: 0,
    hostname: '127.0.0.1',
    silent: true,
    fetch: (request) =>
      limit.handle(
        request,
        async () => {
          const path = new URL(request.url).pathname
          // /long streams for 10 s: only a release on abort frees its slot within the test
          if (path === '/long') return new Response(slowBody(200))
          return new Response(path === '/stream' ? slowBody(6) : 'ok')
        },
        { waitUntil: request.waitUntil },
      ),
  })
  await server.ready()
  close = () => server.close(true)
  return (server.url as string).replace(/\/$/, '')
}

describe('createFetchLimiter on srvx', () => {
  it("keys by srvx's request.ip, sends the headers, then 429", async () => {
    const seen: string[] = []
    const url = await served({ limit: 2, window: '1m', store: new MemoryStore() }, seen)
    const first = await fetch(url)
    expect(first.status).toBe(200)
    expect(await first.text()).toBe('ok')
    expect(first.headers.get('ratelimit')).toBe('"gc2/1m";r=1;t=30')
    expect((await fetch(url)).status).toBe(200)
    const refused = await fetch(url)
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(seen).toEqual(['127.0.0.1', '127.0.0.1', '127.0.0.1'])
  })

  it('a streamed body holds its lease until it ends', async () => {
    const url = await served({ algorithm: 'concurrency', limit: 1, window: '1m' })
    const streaming = await fetch(`${url}/stream`)
    expect(streaming.status).toBe(200)
    expect((await fetch(url)).status).toBe(429)
    expect(await streaming.text()).toBe('012345')
    await sleep(30)
    expect((await fetch(url)).status).toBe(200)
  })

  it('a client that leaves mid-stream gives its lease back', async () => {
    const url = await served({ algorithm: 'concurrency', limit: 1, window: '1m' })
    const controller = new AbortController()
    const streaming = await fetch(`${url}/long`, { signal: controller.signal })
    expect(streaming.status).toBe(200)
    expect((await fetch(url)).status).toBe(429)
    controller.abort()
    let status = 429
    for (let i = 0; i < 100 && status === 429; i++) {
      await sleep(20)
      status = (await fetch(url)).status
    }
    expect(status).toBe(200)
  })
})
