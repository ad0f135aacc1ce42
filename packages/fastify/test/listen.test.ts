// The plugin on a real listening server, with real fetch and a client that aborts early.
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { type RateLimitPluginOptions, rateLimit } from '../src/index.js'
import { countingStore, FASTIFY, until } from './helpers.js'

describe.each(FASTIFY)('$version on a listening server', ({ fastify }) => {
  let app: FastifyInstance | undefined

  afterEach(async () => {
    await app?.close()
    app = undefined
  })

  const listen = async (options: RateLimitPluginOptions) => {
    const store = countingStore()
    let finished = 0
    app = fastify({ forceCloseConnections: true })
    await app.register(rateLimit, { ...options, store })
    app.get('/', async () => 'ok')
    app.get('/slow', async () => {
      // Answers after the client has gone: a late write must not cause a second refund.
      await new Promise((r) => setTimeout(r, 150))
      finished++
      return 'late'
    })
    await app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = app.server.address() as AddressInfo
    return { store, url: `http://127.0.0.1:${port}`, finishedCount: () => finished }
  }

  it('sends the headers, then 429 with Retry-After', async () => {
    const { url } = await listen({ limit: 1, window: '1m' })
    const ok = await fetch(`${url}/`)
    expect(ok.status).toBe(200)
    expect(ok.headers.get('ratelimit-policy')).toBe('"sw1.60000";q=1;w=60')
    const limited = await fetch(`${url}/`)
    expect(limited.status).toBe(429)
    expect(limited.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(((await limited.json()) as { type: string }).type).toBe(
      'https://iana.org/assignments/http-problem-types#quota-exceeded',
    )
  })

  it.each<[string, Partial<RateLimitPluginOptions>, number]>([
    ['skipFailedRequests refunds an aborted request once', { skipFailedRequests: true }, 1],
    [
      'skipSuccessfulRequests does not refund an aborted request',
      { skipSuccessfulRequests: true },
      0,
    ],
  ])('%s', async (_name, options, refunds) => {
    const { store, url, finishedCount } = await listen({ limit: 5, window: '1m', ...options })
    const controller = new AbortController()
    const pending = fetch(`${url}/slow`, { signal: controller.signal }).catch(
      (error: unknown) => error,
    )
    await until(() => store.consumes === 1)
    controller.abort()
    expect(await pending).toBeInstanceOf(Error)
    await until(() => finishedCount() === 1)
    await new Promise((r) => setTimeout(r, 50))
    expect(store.refunds).toBe(refunds)
  })
})
