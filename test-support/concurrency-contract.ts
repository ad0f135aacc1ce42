// Test support: concurrency limits and waiting (`maxDelay`) through every adapter, on real
// servers: leases released exactly once (finish, error, client abort before or after the handler
// ran), draft-10 headers for requests in flight, and delayed requests that a client abandons.
import { parseList } from 'structured-headers'
import { describe, expect, it } from 'vitest'
import type { AdapterHarness } from './adapter-contract.js'

/** The adapter's MemoryStore, counting the releases it is asked for. */
function countingReleases(harness: AdapterHarness): { store: unknown; releases(): number } {
  const store = harness.store() as unknown as { release(call: unknown): Promise<void> }
  const release = store.release.bind(store)
  let count = 0
  store.release = (call) => {
    count++
    return release(call)
  }
  return { store, releases: () => count }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function get(url: string) {
  const res = await fetch(url)
  return { status: res.status, headers: res.headers, body: await res.text() }
}

// Sends a request and aborts it after `ms` (the fetch rejects; that is the point).
function abandon(url: string, ms: number): Promise<void> {
  const controller = new AbortController()
  setTimeout(() => controller.abort(), ms)
  return fetch(url, { signal: controller.signal }).then(
    () => undefined,
    () => undefined,
  )
}

let unique = 0

/** Runs the concurrency and waiting behaviour every adapter shares against `harness`. */
export function describeConcurrencyContract(name: string, harness: AdapterHarness): void {
  describe(name, () => {
    // A limiter on the same store and names as the app's, to read what the app's holds.
    const inflight = (store: unknown, limit = 2) => ({
      algorithm: 'concurrency',
      limit,
      window: '1m',
      name: `cc${unique++}`,
      store,
    })

    it('admits `limit` in flight; a third gets 429 with Retry-After; each lease is released once', async () => {
      const { store, releases } = countingReleases(harness)
      const options = inflight(store)
      const server = await harness.listen(options)
      try {
        const slow = [get(`${server.url}/slow`), get(`${server.url}/slow`)]
        await sleep(40)
        const refused = await get(`${server.url}/slow`)
        expect(refused.status).toBe(429)
        expect(refused.headers.get('retry-after')).toBe('1')
        expect(refused.headers.get('ratelimit-policy')).toBe(
          `"${options.name}";q=2;qu="concurrent-requests"`,
        )
        expect(parseList(refused.headers.get('ratelimit') as string)).toEqual([
          [options.name, new Map([['r', 0]])],
        ])
        expect(JSON.parse(refused.body).detail).toMatch(
          /^The limit is 2 requests in flight at once\./,
        )
        expect((await Promise.all(slow)).map((r) => r.status)).toEqual([200, 200])
        await sleep(20)
        expect(releases()).toBe(2)
        // and the next one passes at once, with the free slots in `r`
        const next = await get(`${server.url}/`)
        expect(next.status).toBe(200)
        expect(next.headers.get('ratelimit')).toBe(`"${options.name}";r=1`)
        await sleep(20)
        expect(releases()).toBe(3)
      } finally {
        await server.close()
      }
    })

    it('a handler that answers 500 releases its lease', async () => {
      const { store, releases } = countingReleases(harness)
      const send = await harness.app(inflight(store, 1))
      for (let i = 0; i < 3; i++) expect((await send('/?status=500')).status).toBe(500)
      expect(releases()).toBe(3)
    })

    it('a client that aborts mid-handler frees its slot at once, not when the handler ends', async () => {
      const { store, releases } = countingReleases(harness)
      const server = await harness.listen(inflight(store, 1))
      try {
        await abandon(`${server.url}/slow`, 30)
        await sleep(20)
        // the handler is still running (150 ms), its client gone: the slot is free
        expect(releases()).toBe(1)
        expect((await get(`${server.url}/`)).status).toBe(200)
        await sleep(200)
        // the abandoned response finishing later releases nothing more
        expect(releases()).toBe(2)
      } finally {
        await server.close()
      }
    })

    it('maxDelay: a burst is spaced at the rate instead of refused', async () => {
      const server = await harness.listen({
        algorithm: 'gcra',
        limit: 20,
        window: '1s',
        burst: 1,
        maxDelay: '1s',
        name: `gc${unique++}`,
      })
      try {
        const started = performance.now()
        const replies = await Promise.all(Array.from({ length: 5 }, () => get(`${server.url}/`)))
        expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200])
        // 5 at 20 per second, one at once: the last waited 4 x 50 ms
        expect(performance.now() - started).toBeGreaterThanOrEqual(195)
      } finally {
        await server.close()
      }
    })

    it('maxDelay: a client gone while waiting never reaches the handler; its slot and lease come back', async () => {
      const server = await harness.listen({
        limits: [
          { name: 'inflight', algorithm: 'concurrency', limit: 5, window: '1m' },
          { name: 'rate', algorithm: 'gcra', limit: 2, window: '1s', burst: 1 },
        ],
        name: `mix${unique++}`,
        maxDelay: '5s',
      })
      try {
        expect((await get(`${server.url}/`)).status).toBe(200)
        // the next waits 500 ms for its slot; its client leaves after 50
        await abandon(`${server.url}/slow`, 50)
        await sleep(550)
        expect(server.finishedCount()).toBe(0)
        // its slot came back: at 600 ms the rate policy is full again, so this one goes at once
        // (kept, it would wait until 1000 ms), and no lease is held but its own
        const started = performance.now()
        const next = await get(`${server.url}/`)
        expect(performance.now() - started).toBeLessThan(200)
        expect(parseList(next.headers.get('ratelimit') as string)[0]).toEqual([
          'inflight',
          new Map([['r', 4]]),
        ])
        await sleep(200)
        expect(server.finishedCount()).toBe(0)
      } finally {
        await server.close()
      }
    })
  })
}
