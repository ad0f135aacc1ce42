// Test support: concurrency limits and waiting (`maxDelay`, `delayAfter`) through every adapter,
// on real servers and on the store the caller gives (MemoryStore or a real Redis): leases
// released exactly once (finish, error, client abort before or after the handler ran), draft-10
// and older headers for requests in flight, delayed requests spaced at the policy's rate, and
// delayed requests that a client abandons.
import { connect } from 'node:net'
import { parseList } from 'structured-headers'
import { describe, expect, it } from 'vitest'
import type { AdapterHarness, ContractOptions, Listening } from './adapter-contract.js'
import { countGiveBacks, freshPrefix, type StoreLike, until } from './adapter-helpers.js'

/** What the contract reads of a limiter from @limiter/core's `createLimiter`. */
export interface PeekingLimiter {
  peek(key: string): Promise<PeekedDecision>
  consume(key: string, cost?: number): Promise<PeekedDecision>
  release(key: string, decision: never): Promise<void>
}

interface PeekedDecision {
  readonly allowed: boolean
  readonly remaining: number
  readonly policies: readonly { readonly remaining: number }[]
}

/** Where the counters live for one run of the contract. */
export interface ConcurrencyBackend {
  /**
   * A fresh store: a MemoryStore, or a RedisStore on the test file's private redis-server. The
   * contract counts the calls of its `release` and `refund` (one-policy limiters only).
   */
  store(): StoreLike
  /**
   * The store takes a limiter's calls through an internal batching entry point (RedisStore): to
   * count them, one-policy tests see it through {@link publicMethods}.
   */
  readonly batching?: boolean
  /** @limiter/core's `createLimiter`: a limiter on the app's store and names, to peek at it. */
  readonly createLimiter: (options: never) => PeekingLimiter
}

// A store's public methods on a plain object. A limiter calls a RedisStore through an internal
// batching entry point; through this it calls `release` and `refund`, which can be counted.
// (Several policies need the store itself.)
function publicMethods<S extends StoreLike & { release(call: never): Promise<unknown> }>(
  store: S,
): StoreLike {
  return {
    consume: (call) => store.consume(call),
    refund: (call) => store.refund(call),
    release: (call: never) => store.release(call),
    reset: (call) => store.reset(call),
  } as StoreLike
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

// Writes GETs of `paths` pipelined on one HTTP/1.1 connection, then destroys it once the first
// has had time to reach its handler.
async function pipelineAndDestroy(url: string, paths: readonly string[]): Promise<void> {
  const { hostname, port } = new URL(url)
  const socket = connect(Number(port), hostname)
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  socket.write(paths.map((path) => `GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`).join(''))
  await sleep(30)
  socket.destroy()
}

// Sends a request to `/slow` and aborts it once its handler has started.
async function abandonOnceStarted(server: Listening): Promise<void> {
  const before = server.handlerStarts().length
  const controller = new AbortController()
  const sent = fetch(`${server.url}/slow`, { signal: controller.signal }).then(
    () => undefined,
    () => undefined,
  )
  await until(() => server.handlerStarts().length > before)
  controller.abort()
  await sent
}

// A draft-10 field as [name, parameters] per member (throws unless it is a valid SF List).
function members(value: string | null | undefined): Array<[string, Record<string, unknown>]> {
  expect(typeof value).toBe('string')
  return parseList(value as string).map(([item, params]) => [
    String(item),
    Object.fromEntries(params),
  ])
}

let unique = 0

// How much earlier than the policy's rate a handler may start, relative to the first of a burst:
// that one starts a little after its decision (the others' slots count from the decision).
const TOLERANCE_MS = 5

/** Every request of these tests has this key. */
const KEY = 'k'

/**
 * Runs the concurrency and waiting behaviour every adapter shares against `harness`, with its
 * counters in `backend`'s stores.
 */
export function describeConcurrencyContract(
  name: string,
  harness: AdapterHarness,
  backend: ConcurrencyBackend,
): void {
  // The app's options (one key for every request, a store of their own that counts what is given
  // back: releases and refunds) and a limiter with the same definition on the same store, to
  // peek at what the app's holds.
  const setup = (policy: ContractOptions) => {
    const given = backend.store()
    const countable = backend.batching === true && policy.limits === undefined
    const store = (countable ? publicMethods(given as never) : given) as StoreLike & {
      release(call: unknown): Promise<void>
      refund(call: unknown): Promise<void>
    }
    const counts = countGiveBacks(store)
    const definition: ContractOptions = {
      ...policy,
      name: `cc${unique++}`,
      prefix: freshPrefix(),
      store,
    }
    const options: ContractOptions = { ...definition, key: () => KEY }
    const {
      headers: _headers,
      maxDelay: _maxDelay,
      delayAfter: _delayAfter,
      skipAbortedRequests: _skipAbortedRequests,
      ...limiter
    } = definition
    return { options, counts, limiter: backend.createLimiter(limiter as never) }
  }

  // Waits until `counts` reach `expected`, then a little more to see that nothing else comes.
  const settled = async (counts: object, expected: object) => {
    await until(() => JSON.stringify(counts) === JSON.stringify(expected))
    await sleep(30)
    expect(counts).toEqual(expected)
  }

  describe(name, () => {
    const TWO = { algorithm: 'concurrency', limit: 2, window: '1m' }

    it('admits `limit` in flight, refuses the next with Retry-After, lets one in as soon as one ends', async () => {
      const { options, counts, limiter } = setup(TWO)
      const server = await harness.listen(options)
      try {
        // a first request warms the app and its store up (a fresh one can take 100 ms or more on a
        // loaded machine, which would shift the timings below)
        expect((await get(`${server.url}/`)).status).toBe(200)
        const first = get(`${server.url}/slow`)
        await sleep(100)
        const second = get(`${server.url}/slow`)
        await sleep(20)
        const refused = await get(`${server.url}/slow`)
        expect(refused.status).toBe(429)
        expect(refused.headers.get('retry-after')).toBe('1')
        expect(refused.headers.get('ratelimit-policy')).toBe(
          `"${options.name}";q=2;qu="concurrent-requests"`,
        )
        // `r` is the free slots; no `t`: no time frees a slot
        expect(members(refused.headers.get('ratelimit'))).toEqual([[options.name, { r: 0 }]])
        expect(JSON.parse(refused.body).detail).toMatch(
          /^The limit is 2 requests in flight at once\./,
        )
        expect((await first).status).toBe(200)
        // the second is still in flight (about 100 ms more): the first's slot is free at once
        const next = await get(`${server.url}/`)
        expect(next.status).toBe(200)
        expect(members(next.headers.get('ratelimit'))).toEqual([[options.name, { r: 0 }]])
        expect(server.finishedCount()).toBe(1)
        expect((await second).status).toBe(200)
        await settled(counts, { releases: 4, refunds: 0 })
        expect((await limiter.peek(KEY)).remaining).toBe(2)
      } finally {
        await server.close()
      }
    })

    it('a handler that throws releases its lease once', async () => {
      const { options, counts, limiter } = setup(TWO)
      const server = await harness.listen(options)
      try {
        expect((await get(`${server.url}/fail`)).status).toBe(500)
        expect((await get(`${server.url}/fail`)).status).toBe(500)
        await settled(counts, { releases: 2, refunds: 0 })
        expect((await limiter.peek(KEY)).remaining).toBe(2)
      } finally {
        await server.close()
      }
    })

    it('a handler that answers 500 releases its lease once', async () => {
      const { options, counts, limiter } = setup({ ...TWO, limit: 1 })
      const send = await harness.app(options)
      for (let i = 0; i < 3; i++) expect((await send('/?status=500')).status).toBe(500)
      await settled(counts, { releases: 3, refunds: 0 })
      expect((await limiter.peek(KEY)).remaining).toBe(1)
    })

    it('a client that aborts mid-handler: its slot is held until the handler ends, released once', async () => {
      const { options, counts, limiter } = setup({ ...TWO, limit: 1 })
      const server = await harness.listen(options)
      try {
        await abandonOnceStarted(server)
        // the handler still runs (150 ms), its client gone: the slot stays taken until it ends
        await until(() => counts.releases === 1)
        expect(server.finishedCount()).toBe(1)
        expect(server.handlerStarts()).toHaveLength(1)
        expect((await limiter.peek(KEY)).remaining).toBe(1)
        expect((await get(`${server.url}/`)).status).toBe(200)
        await settled(counts, { releases: 2, refunds: 0 })
      } finally {
        await server.close()
      }
    })

    it('skipAbortedRequests: a client that aborts mid-handler is refunded once its handler ends', async () => {
      const { options, counts, limiter } = setup({ ...TWO, limit: 1, skipAbortedRequests: true })
      const server = await harness.listen(options)
      try {
        await abandonOnceStarted(server)
        // aborted (its client left before the response finished): refunded, the lease with it,
        // once the handler has ended
        await until(() => counts.refunds === 1)
        expect(server.finishedCount()).toBe(1)
        await settled(counts, { releases: 0, refunds: 1 })
        expect((await limiter.peek(KEY)).remaining).toBe(1)
      } finally {
        await server.close()
      }
    })

    it('releaseOnDisconnect: a client that aborts mid-handler frees its slot at once, and once', async () => {
      const { options, counts, limiter } = setup({ ...TWO, limit: 1 })
      const server = await harness.listen({ ...options, releaseOnDisconnect: true })
      try {
        await abandonOnceStarted(server)
        // the handler still runs (150 ms), its client gone: the slot is free
        await until(() => counts.releases === 1)
        expect(server.finishedCount()).toBe(0)
        expect((await limiter.peek(KEY)).remaining).toBe(1)
        expect((await get(`${server.url}/`)).status).toBe(200)
        await sleep(200)
        // the abandoned handler finishing later releases nothing more
        await settled(counts, { releases: 2, refunds: 0 })
        expect((await limiter.peek(KEY)).remaining).toBe(1)
      } finally {
        await server.close()
      }
    })

    // One client aborting each request 30 ms in, four at a time, against a 150 ms handler.
    const hangingUp = async (url: string) => {
      const chain = async () => {
        for (let i = 0; i < 10; i++) await abandon(`${url}/slow`, 30)
      }
      await Promise.all([chain(), chain(), chain(), chain()])
    }

    it('clients that hang up cannot run more handlers at once than the limit', async () => {
      const { options, counts, limiter } = setup(TWO)
      const server = await harness.listen(options)
      try {
        await hangingUp(server.url)
        await until(() => counts.releases === server.handlerStarts().length)
        expect(server.handlerStarts().length).toBeGreaterThanOrEqual(2)
        expect(server.peakRunning()).toBeLessThanOrEqual(2)
        expect((await limiter.peek(KEY)).remaining).toBe(2)
      } finally {
        await server.close()
      }
    })

    it('releaseOnDisconnect: a client that hangs up frees its slot while its handler runs', async () => {
      const { options, counts, limiter } = setup(TWO)
      const server = await harness.listen({ ...options, releaseOnDisconnect: true })
      try {
        await hangingUp(server.url)
        // slots came back as clients left: more handlers ran at once than the limit
        expect(server.peakRunning()).toBeGreaterThan(2)
        await until(() => counts.releases === server.handlerStarts().length)
        await sleep(200)
        expect((await limiter.peek(KEY)).remaining).toBe(2)
      } finally {
        await server.close()
      }
    })

    it.each([
      ['their handlers ending after', ['/slow', '/slow', '/slow', '/slow']],
      ['answered behind a slow one', ['/slow', '/', '/', '/']],
    ])(
      'pipelined requests on a connection the client destroys release their leases: %s',
      async (_name, paths) => {
        for (const releaseOnDisconnect of [false, true]) {
          const { options, counts, limiter } = setup({ ...TWO, limit: 4 })
          const server = await harness.listen(
            releaseOnDisconnect ? { ...options, releaseOnDisconnect } : options,
          )
          try {
            await pipelineAndDestroy(server.url, paths)
            await until(() => server.handlerStarts().length === 4)
            await until(() => counts.releases === 4)
            await sleep(200)
            expect(counts).toEqual({ releases: 4, refunds: 0 })
            expect((await limiter.peek(KEY)).remaining).toBe(4)
          } finally {
            await server.close()
          }
        }
      },
    )

    it('a client that aborts before the handler ran (during an async key) frees its slot once', async () => {
      const { options, counts, limiter } = setup({ ...TWO, limit: 1 })
      const server = await harness.listen({
        ...options,
        key: () => sleep(100).then(() => KEY),
      })
      try {
        await abandon(`${server.url}/slow`, 30)
        await until(() => counts.releases === 1)
        expect((await limiter.peek(KEY)).remaining).toBe(1)
        // whatever the framework does with the abandoned request, nothing is given back twice
        await sleep(250)
        await settled(counts, { releases: 1, refunds: 0 })
        expect((await get(`${server.url}/`)).status).toBe(200)
        await settled(counts, { releases: 2, refunds: 0 })
        expect((await limiter.peek(KEY)).remaining).toBe(1)
      } finally {
        await server.close()
      }
    })

    it.each<[string, ContractOptions, Record<string, string | null>]>([
      [
        'draft-7 and legacy',
        { headers: ['draft-7', 'legacy'] },
        {
          'ratelimit-policy': '1',
          ratelimit: 'limit=1, remaining=0',
          'x-ratelimit-limit': '1',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': null,
        },
      ],
      [
        'draft-6',
        { headers: 'draft-6' },
        {
          'ratelimit-policy': '1',
          'ratelimit-limit': '1',
          'ratelimit-remaining': '0',
          'ratelimit-reset': null,
        },
      ],
    ])('%s: no reset field; a refusal says `retryAfter`', async (_name, headers, expected) => {
      const { options, limiter } = setup({ ...TWO, limit: 1, retryAfter: '3s', ...headers })
      const send = await harness.app(options)
      const admitted = await send('/')
      expect(admitted.status).toBe(200)
      for (const [field, value] of Object.entries(expected))
        expect(admitted.headers[field] ?? null, field).toBe(value)
      // another process holds the only slot
      const held = await limiter.consume(KEY)
      expect(held.allowed).toBe(true)
      const refused = await send('/')
      expect(refused.status).toBe(429)
      expect(refused.headers['retry-after']).toBe('3')
      for (const field of ['ratelimit-reset', 'x-ratelimit-reset'])
        expect(refused.headers[field], field).toBeUndefined()
      await limiter.release(KEY, held as never)
      expect((await send('/')).status).toBe(200)
    })

    it('draft-10 with a concurrency and a rate policy: qu and no t for the first only', async () => {
      const { options } = setup({
        limits: [
          { name: 'inflight', algorithm: 'concurrency', limit: 3, window: '1m' },
          { name: 'rate', algorithm: 'fixed-window', limit: 10, window: '1m' },
        ],
      })
      const res = await (await harness.app(options))('/')
      expect(res.status).toBe(200)
      expect(res.headers['ratelimit-policy']).toBe(
        '"inflight";q=3;qu="concurrent-requests", "rate";q=10;w=60',
      )
      expect(members(res.headers.ratelimit as string)).toEqual([
        ['inflight', { r: 2 }],
        ['rate', { r: 9, t: 60 }],
      ])
    })

    it('maxDelay: a burst is delayed, not refused, its handlers started at the policy rate', async () => {
      const { options } = setup({
        algorithm: 'gcra',
        limit: 20,
        window: '1s',
        burst: 1,
        maxDelay: '1s',
      })
      const server = await harness.listen(options)
      try {
        const replies = await Promise.all(Array.from({ length: 5 }, () => get(`${server.url}/`)))
        expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200])
        // one at once, then one per 50 ms after it: a timer never fires early, but the first
        // handler may start late after its decision (tens of ms on a loaded machine, with the
        // test suite beside it), and the others' decisions came later
        const starts = server.handlerStarts()
        expect(starts).toHaveLength(5)
        const first = starts[0] as number
        for (let i = 1; i < 5; i++)
          expect((starts[i] as number) - first).toBeGreaterThanOrEqual(50 * i - 25)
        expect((starts[4] as number) - first).toBeLessThan(200 + 100)
      } finally {
        await server.close()
      }
    })

    it('delayAfter: the first of a burst go at once, the rest wait their turn, beyond it 429', async () => {
      const { options } = setup({
        algorithm: 'gcra',
        limit: 10,
        window: '1s',
        burst: 4,
        delayAfter: 2,
      })
      const server = await harness.listen(options)
      try {
        const replies = await Promise.all(Array.from({ length: 5 }, () => get(`${server.url}/`)))
        const statuses = replies.map((r) => r.status).sort()
        expect(statuses).toEqual([200, 200, 200, 200, 429])
        const refused = replies.find((r) => r.status === 429)
        expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
        const starts = server.handlerStarts()
        expect(starts).toHaveLength(4)
        const [a, b, c, d] = starts as [number, number, number, number]
        expect(b - a).toBeLessThan(60)
        // then one per 100 ms
        expect(c - a).toBeGreaterThanOrEqual(100 - TOLERANCE_MS)
        expect(d - a).toBeGreaterThanOrEqual(200 - TOLERANCE_MS)
        expect(d - a).toBeLessThan(200 + 100)
      } finally {
        await server.close()
      }
    })

    it('maxDelay: a client gone while waiting never reaches the handler; its slot is refunded once', async () => {
      const { options, counts, limiter } = setup({
        algorithm: 'gcra',
        limit: 2,
        window: '1s',
        burst: 1,
        maxDelay: '5s',
      })
      const server = await harness.listen(options)
      try {
        expect((await get(`${server.url}/`)).status).toBe(200)
        // the next one's slot is 500 ms ahead; its client leaves after 50
        await abandon(`${server.url}/slow`, 50)
        await settled(counts, { releases: 0, refunds: 1 })
        await sleep(550)
        expect(server.handlerStarts()).toHaveLength(1)
        // at 600 ms the first request's slot is free again; kept, the reservation would hold the
        // policy until 1000 ms
        expect((await limiter.peek(KEY)).remaining).toBe(1)
        expect(counts).toEqual({ releases: 0, refunds: 1 })
      } finally {
        await server.close()
      }
    })

    it('maxDelay with a concurrency policy: a client gone while waiting gets its slot and lease back', async () => {
      const { options, limiter } = setup({
        limits: [
          { name: 'inflight', algorithm: 'concurrency', limit: 5, window: '1m' },
          { name: 'rate', algorithm: 'gcra', limit: 2, window: '1s', burst: 1 },
        ],
        maxDelay: '5s',
      })
      const server = await harness.listen(options)
      try {
        expect((await get(`${server.url}/`)).status).toBe(200)
        // the next waits 500 ms for its slot; its client leaves after 50
        await abandon(`${server.url}/slow`, 50)
        await sleep(550)
        expect(server.handlerStarts()).toHaveLength(1)
        const peeked = await limiter.peek(KEY)
        expect(peeked.policies.map((p) => p.remaining)).toEqual([5, 1])
        // so this one goes at once (kept, the reservation would make it wait until 1000 ms), and
        // holds the one lease
        const started = performance.now()
        const next = await get(`${server.url}/`)
        expect(performance.now() - started).toBeLessThan(200)
        expect(members(next.headers.get('ratelimit'))[0]).toEqual(['inflight', { r: 4 }])
        await sleep(50)
        expect((await limiter.peek(KEY)).policies[0]?.remaining).toBe(5)
        expect(server.handlerStarts()).toHaveLength(2)
      } finally {
        await server.close()
      }
    })

    it('maxDelay, delayAfter and retryAfter are options; bad values are refused naming them', async () => {
      const errors = async (options: ContractOptions) =>
        (await harness.optionErrors(options)).map((e) => (e as Error | undefined)?.message)
      for (const message of await errors({
        algorithm: 'gcra',
        limit: 2,
        window: '1s',
        maxDelay: '1s',
        delayAfter: 1,
      }))
        expect(message).toBeUndefined()
      // the default algorithm, gcra, reserves; sliding-window cannot
      for (const message of await errors({ limit: 2, window: '1s', maxDelay: '1s' }))
        expect(message).toBeUndefined()
      for (const message of await errors({
        algorithm: 'sliding-window',
        limit: 2,
        window: '1s',
        maxDelay: '1s',
      }))
        expect(message).toMatch(/maxDelay.*algorithm 'sliding-window'/)
      for (const message of await errors({
        algorithm: 'gcra',
        limit: 2,
        window: '1s',
        maxDelay: 'soon',
      }))
        expect(message).toMatch(/maxDelay/)
      for (const message of await errors({
        algorithm: 'gcra',
        limit: 2,
        window: '1s',
        delayAfter: 0,
      }))
        expect(message).toMatch(/delayAfter/)
      for (const message of await errors({ limit: 2, window: '1s', retryAfter: '2s' }))
        expect(message).toMatch(/retryAfter/)
    })
  })
}
