// Test support: a property test for any adapter's rateLimit(). Random methods, paths, header values,
// key callback results (any string, lone surrogates included, or nonsense) and costs, checked
// against a model of the counters: no 500 caused by the limiter on a valid request, the right
// status and the right headers. Each adapter's fuzz test supplies a way to send one request.
import { Agent, request as httpRequest, type Server } from 'node:http'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { served } from './adapter-helpers.js'

/** What the key callback does for one request. */
export type KeyResult =
  | { readonly kind: 'value'; readonly value: unknown; readonly async: boolean }
  | { readonly kind: 'throw'; readonly async: boolean }

/** One random request and what its callbacks return. */
export interface Shot {
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly key: KeyResult
  readonly cost: unknown
}

/** The options a scenario varies; the window is always one hour, so nothing refills meanwhile. */
export interface ScenarioOptions {
  readonly algorithm: 'sliding-log' | 'token-bucket' | 'leaky-bucket' | 'gcra'
  readonly limit: number
  readonly headers: 'draft-10' | 'legacy'
}

/** What came back. */
export interface Answer {
  readonly status: number
  readonly headers: Record<string, string | string[] | number | undefined>
  readonly body: string
}

// Any UTF-16 code units, lone surrogates included, and keys that collide on purpose.
const anyString = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
  fc.string({ unit: 'binary' }),
  fc.constantFrom('alice', 'bob', '{', '}', '%', '%7B', ':', '*', '\n', '\ud800', '\ufffd'),
)
const keyResult: fc.Arbitrary<KeyResult> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('value' as const),
      value: anyString,
      async: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('value' as const),
      // Numbers and bigints are keys (as their decimal text); the rest are errors.
      value: fc.constantFrom<unknown>(
        '',
        undefined,
        null,
        Number.NaN,
        Infinity,
        {},
        ['k'],
        42,
        42n,
        '42',
      ),
      async: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('throw' as const), async: fc.boolean() }) },
)
// Header values Node accepts on the wire: tab, printable ASCII and Latin-1.
const headerValue = fc.string({
  unit: fc
    .oneof(
      fc.integer({ min: 0x20, max: 0x7e }),
      fc.integer({ min: 0xa0, max: 0xff }),
      fc.constant(9),
    )
    .map((c) => String.fromCharCode(c)),
  maxLength: 60,
})
const headers = fc.dictionary(
  fc.constantFrom(
    'x-forwarded-for',
    'x-real-ip',
    'forwarded',
    'user-agent',
    'cookie',
    'accept',
    'authorization',
    'x-ratelimit-remaining',
    'ratelimit',
    'retry-after',
  ),
  headerValue,
  { maxKeys: 5 },
)

/** Random request paths; `wellFormed` leaves out malformed percent-escapes. */
export function pathArbitrary(wellFormed = false): fc.Arbitrary<string> {
  const odd = [
    '..',
    '.',
    '%2F',
    '%00',
    '~',
    ';a=b',
    '{id}',
    '*',
    ...(wellFormed ? [] : ['%zz', '%']),
  ]
  const segment = fc.oneof(
    fc.webSegment(),
    // Any text, percent-encoded (as UTF-8, where lone surrogates become U+FFFD).
    anyString.map((text) => encodeURIComponent(Buffer.from(text).toString())),
    fc.constantFrom(...odd),
  )
  return fc
    .tuple(fc.array(segment, { maxLength: 4 }), fc.option(fc.webQueryParameters()))
    .map(([segments, query]) => `/${segments.join('/')}${query === null ? '' : `?${query}`}`)
}

/** A scenario: options, then 1 to 15 requests against one fresh limiter. */
export function scenarioArbitrary(wellFormedPaths = false) {
  const path = pathArbitrary(wellFormedPaths)
  return fc
    .record({
      algorithm: fc.constantFrom('sliding-log', 'token-bucket', 'leaky-bucket', 'gcra' as const),
      limit: fc.integer({ min: 1, max: 4 }),
      headers: fc.constantFrom('draft-10', 'legacy' as const),
    })
    .chain((options: ScenarioOptions) =>
      fc.record({
        options: fc.constant(options),
        shots: fc.array(
          fc.record({
            method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'),
            path,
            headers,
            key: keyResult,
            cost: fc.oneof(
              { weight: 9, arbitrary: fc.integer({ min: 1, max: options.limit }) },
              {
                weight: 1,
                arbitrary: fc.constantFrom<unknown>(0, options.limit + 1, 1.5, '1', undefined),
              },
            ),
          }),
          { minLength: 1, maxLength: 15 },
        ),
      }),
    )
}

/** The `key` and `cost` options that answer what the current shot says. */
export function callbacks(current: () => Shot | undefined) {
  return {
    key: (): string => {
      const k = current()?.key as KeyResult
      if (k.kind === 'throw') {
        if (k.async) return Promise.reject(new Error('lookup failed')) as unknown as string
        throw new Error('lookup failed')
      }
      return (k.async ? Promise.resolve(k.value) : k.value) as string
    },
    cost: (): number => current()?.cost as number,
  }
}

/**
 * Sends the shots one by one (through `send`, after `setCurrent`) and checks each answer against
 * the model. `name` is the limiter's name as headers show it (`defaultName` of the policy).
 * `errorCode` reads the error code from a 500's body, where the adapter shows one.
 */
export async function checkShots(
  options: ScenarioOptions,
  name: string,
  shots: readonly Shot[],
  send: (shot: Shot) => Promise<Answer>,
  setCurrent: (shot: Shot) => void,
  errorCode: (answer: Answer) => unknown = (a) => JSON.parse(a.body).code,
): Promise<void> {
  const used = new Map<string, number>()
  for (const s of shots) {
    setCurrent(s)
    const res = await send(s)
    const at = `${s.method} ${s.path}`
    const { key, cost } = s
    const value = key.kind === 'value' ? key.value : undefined
    const validKey =
      (typeof value === 'string' && value !== '') ||
      (typeof value === 'number' && Number.isFinite(value)) ||
      typeof value === 'bigint'
    const validCost =
      typeof cost === 'number' && Number.isInteger(cost) && cost >= 1 && cost <= options.limit
    if (!validKey || !validCost) {
      // A broken callback is the app's error, handed to the framework naming the option.
      expect(res.status, at).toBe(500)
      if (s.method !== 'HEAD')
        expect(errorCode(res), at).toBe(validKey ? 'ERR_LIMITER_COST' : 'ERR_LIMITER_KEY')
      continue
    }
    const userKey = String(value)
    const before = used.get(userKey) ?? 0
    const allowed = before + (cost as number) <= options.limit
    if (allowed) used.set(userKey, before + (cost as number))
    const remaining = options.limit - (used.get(userKey) ?? 0)
    expect(res.status, at).toBe(allowed ? 200 : 429)
    if (allowed) {
      expect(res.headers['retry-after'], at).toBeUndefined()
      if (s.method !== 'HEAD') expect(res.body, at).toBe('ok')
    } else {
      expect(res.headers['retry-after'], at).toMatch(/^[1-9]\d*$/)
      expect(res.headers['content-type'], at).toMatch(/^application\/problem\+json/)
    }
    if (options.headers === 'draft-10') {
      expect(res.headers['ratelimit-policy'], at).toBe(`"${name}";q=${options.limit};w=3600`)
      expect(res.headers.ratelimit, at).toMatch(new RegExp(`^"${name}";r=${remaining};t=\\d+$`))
      expect(res.headers['x-ratelimit-remaining'], at).toBeUndefined()
    } else {
      expect(res.headers['x-ratelimit-limit'], at).toBe(String(options.limit))
      expect(res.headers['x-ratelimit-remaining'], at).toBe(String(remaining))
      expect(res.headers['x-ratelimit-reset'], at).toMatch(/^\d{10}$/)
      expect(res.headers.ratelimit, at).toBeUndefined()
    }
  }
}

/** Sends one shot to a listening server with Node's http client (any path, any method). */
export function httpSender(baseUrl: string, agent: Agent = new Agent({ keepAlive: true })) {
  const url = new URL(baseUrl)
  return (s: Shot): Promise<Answer> =>
    new Promise<Answer>((resolve, reject) => {
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          method: s.method,
          path: s.path,
          headers: s.headers,
          agent,
        },
        (res) => {
          let body = ''
          res.setEncoding('utf8')
          res.on('data', (chunk: string) => {
            body += chunk
          })
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
        },
      )
      req.on('error', reject)
      req.end()
    })
}

/** What an adapter supplies to run the property test. */
export interface FuzzHarness {
  /** The stores to run it with, by name (such as MemoryStore and RedisStore). */
  readonly stores: ReadonlyArray<readonly [string, () => unknown]>
  /** The limiter's name as headers show it for `options` with a one-hour window (`defaultName`). */
  name(options: ScenarioOptions): string
  /** Leave out malformed percent-escapes, for a framework that answers them 400 before routing. */
  readonly wellFormedPaths?: boolean
  /**
   * Puts a limiter with `options` in front of a handler answering 200 `ok` to any method and path,
   * with errors answered 500 as JSON `{ code }`; returns how to send it one shot and how to take
   * it down again.
   */
  mount(options: Record<string, unknown>): Promise<{
    send(shot: Shot): Promise<Answer>
    unmount(): Promise<void>
  }>
}

/** What fuzzStores() reads of @limiter/core (passed in: test-support does not import it). */
export interface FuzzCore<P> {
  readonly MemoryStore: new () => unknown
  definePolicy(options: never): P
  defaultName(policy: P): string
}

/**
 * The stores every adapter fuzzes with, MemoryStore and `redisStore` (a RedisStore on the file's
 * private redis-server), and the names headers show, from `core`.
 */
export function fuzzStores<P>(
  core: FuzzCore<P>,
  redisStore: () => unknown,
): Pick<FuzzHarness, 'stores' | 'name'> {
  return {
    stores: [
      ['MemoryStore', () => new core.MemoryStore()],
      ['RedisStore', redisStore],
    ],
    name: (options) => core.defaultName(core.definePolicy({ ...options, window: '1h' } as never)),
  }
}

/**
 * A server `listen` starts before this describe block's tests, kept up across property runs (each
 * mounts a fresh limiter in it) and closed after them; resolves to how to send it a shot, which
 * `mount` can return, inside tests.
 */
export function useFuzzServer(listen: () => Server): () => (shot: Shot) => Promise<Answer> {
  let server: Awaited<ReturnType<typeof served>> | undefined
  let send: ((shot: Shot) => Promise<Answer>) | undefined
  const agent = new Agent({ keepAlive: true })
  beforeAll(async () => {
    server = await served(listen())
    send = httpSender(server.url, agent)
  })
  afterAll(async () => {
    agent.destroy()
    await server?.close()
  })
  return () => {
    if (send === undefined) throw new Error('useFuzzServer: the server is not up (inside a test?)')
    return send
  }
}

/** Counts property runs in a file: each run gets counters of its own in a shared store. */
let run = 0

/** The property test, once per store, in a describe block named `title`. */
export function describeFuzzContract(title: string, harness: FuzzHarness): void {
  describe(title, () => {
    it.each(harness.stores)(
      '%s',
      async (_name, makeStore) => {
        await fc.assert(
          fc.asyncProperty(
            scenarioArbitrary(harness.wellFormedPaths),
            async ({ options, shots }) => {
              let current: Shot | undefined
              const { send, unmount } = await harness.mount({
                ...options,
                window: '1h',
                store: makeStore(),
                prefix: `fuzz${++run}:`,
                failureMode: 'closed',
                // Forged forwarding headers and random keys are what this test sends on purpose.
                warnings: false,
                ...callbacks(() => current),
              })
              try {
                await checkShots(options, harness.name(options), shots, send, (s) => {
                  current = s
                })
              } finally {
                await unmount()
              }
            },
          ),
          { numRuns: 100 },
        )
      },
      60_000,
    )
  })
}
