// Test support: the shared adapter behaviour on a real listening server (see adapter-contract.ts),
// with real fetch and a client that aborts early.
import { afterEach, describe, expect, it } from 'vitest'
import {
  type AdapterHarness,
  type ContractOptions,
  type Listening,
  QUOTA_EXCEEDED,
} from './adapter-contract.js'
import { countingStore, until } from './adapter-helpers.js'

/** Runs the shared behaviour on a real listening server, with real fetch and early aborts. */
export function describeListeningContract(name: string, harness: AdapterHarness): void {
  describe(name, () => {
    let server: Listening | undefined
    afterEach(async () => {
      await server?.close()
      server = undefined
    })

    const listen = async (options: ContractOptions) => {
      const store = countingStore(harness.store())
      server = await harness.listen({ ...options, store })
      return { store, ...server, url: server.url }
    }

    it('sends the headers, then 429 with Retry-After', async () => {
      const { url } = await listen({ limit: 1, window: '1m' })
      const ok = await fetch(`${url}/`)
      expect(ok.status).toBe(200)
      expect(await ok.text()).toBe('ok')
      expect(ok.headers.get('ratelimit-policy')).toBe('"gc1/1m";q=1;w=60')
      const limited = await fetch(`${url}/`)
      expect(limited.status).toBe(429)
      expect(limited.headers.get('content-type')).toMatch(/^application\/problem\+json/)
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      expect(((await limited.json()) as { type: string }).type).toBe(QUOTA_EXCEEDED)
    })

    it.each<[string, ContractOptions, number]>([
      // The handler ran: hanging up must not make a request free (20 runs under 2/h, before).
      ['skipFailedRequests keeps an aborted request counted', { skipFailedRequests: true }, 0],
      [
        'skipSuccessfulRequests does not refund an aborted request',
        { skipSuccessfulRequests: true },
        0,
      ],
      ['skipAbortedRequests refunds an aborted request once', { skipAbortedRequests: true }, 1],
    ])('%s', async (_name, options, refunds) => {
      const { store, url, finishedCount } = await listen({ limit: 5, window: '1m', ...options })
      const controller = new AbortController()
      const pending = fetch(`${url}/slow`, { signal: controller.signal }).catch(
        (error: unknown) => error,
      )
      await until(() => store.consumes === 1)
      controller.abort()
      expect(await pending).toBeInstanceOf(Error)
      // The handler answers after the client has gone: a late write must not refund twice.
      await until(() => finishedCount() === 1)
      await new Promise((r) => setTimeout(r, 50))
      expect(store.refunds).toBe(refunds)
    })

    it('skipAbortedRequests refunds once a request whose client left while its key was read', async () => {
      const { store, url } = await listen({
        limit: 5,
        window: '1m',
        skipAbortedRequests: true,
        key: () => new Promise((r) => setTimeout(() => r('k'), 100)),
      })
      const controller = new AbortController()
      const pending = fetch(`${url}/slow`, { signal: controller.signal }).catch(
        (error: unknown) => error,
      )
      setTimeout(() => controller.abort(), 30)
      expect(await pending).toBeInstanceOf(Error)
      // counted when the key came, after the response had closed: refunded then, and only then
      await until(() => store.refunds === 1)
      await new Promise((r) => setTimeout(r, 250))
      expect([store.consumes, store.refunds]).toEqual([1, 1])
    })
  })
}
