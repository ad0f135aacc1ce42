// Test support: the behaviour every adapter's rateLimit() shares, written once and run by each
// adapter on each framework major through a small harness (build an app, send a request, read
// status, headers and body). Framework vocabulary (route scopes, onLimited's signature, error
// events) stays in each adapter's own tests.
import { describe, expect, it } from 'vitest'
import { countingStore, warningsDuring } from './adapter-helpers.js'
import type { AdapterHarness, ContractOptions, Reply } from './harness.js'
import { describeOperatorCases } from './operator-contract.js'

export type { AdapterHarness, ContractOptions, Listening, Reply, Send } from './harness.js'

/** The errors `create()` throws synchronously: `[error]`, or `[undefined]` if it throws none. */
export function thrownBy(create: () => unknown): unknown[] {
  try {
    create()
  } catch (error) {
    return [error]
  }
  return [undefined]
}

/** The problem type of a limited response (RFC 9457, IANA registry). */
export const QUOTA_EXCEEDED = 'https://iana.org/assignments/http-problem-types#quota-exceeded'

/** Runs the shared adapter behaviour against `harness`, in a describe block named `name`. */
export function describeAdapterContract(name: string, harness: AdapterHarness): void {
  const appWith = async (options: ContractOptions) => harness.app(options)
  const json = (reply: Reply) => JSON.parse(reply.body)

  describe(name, () => {
    describeOperatorCases(harness, appWith)

    describe('headers', () => {
      it('sends draft-10 RateLimit-Policy and RateLimit by default, for a gcra policy', async () => {
        const res = await (await appWith({ limit: 3, window: '1m' }))('/')
        expect(res.status).toBe(200)
        // the default algorithm is gcra (`gc`), burst = limit: one request's interval is 20 s
        expect(res.headers['ratelimit-policy']).toBe('"gc3/1m";q=3;w=60')
        expect(res.headers.ratelimit).toBe('"gc3/1m";r=2;t=20')
        expect(res.headers['retry-after']).toBeUndefined()
      })

      it.each<[string, unknown, Record<string, RegExp | undefined>]>([
        [
          'draft-7',
          'draft-7',
          { 'ratelimit-policy': /^3;w=60$/, ratelimit: /^limit=3, remaining=2, reset=\d+$/ },
        ],
        [
          'draft-6',
          'draft-6',
          {
            'ratelimit-policy': /^3;w=60$/,
            'ratelimit-limit': /^3$/,
            'ratelimit-remaining': /^2$/,
            'ratelimit-reset': /^\d+$/,
            ratelimit: undefined,
          },
        ],
        [
          'legacy',
          'legacy',
          {
            'x-ratelimit-limit': /^3$/,
            'x-ratelimit-remaining': /^2$/,
            'x-ratelimit-reset': /^\d{10}$/,
            ratelimit: undefined,
          },
        ],
        [
          'draft-10 + legacy',
          ['draft-10', 'legacy'],
          { ratelimit: /^"gc3\/1m";r=2;t=20$/, 'x-ratelimit-remaining': /^2$/ },
        ],
        [
          'false',
          false,
          { ratelimit: undefined, 'ratelimit-policy': undefined, 'x-ratelimit-limit': undefined },
        ],
      ])('headers: %s', async (_name, headers, expected) => {
        const res = await (await appWith({ limit: 3, window: '1m', headers }))('/')
        for (const [header, pattern] of Object.entries(expected)) {
          if (pattern === undefined) expect(res.headers[header]).toBeUndefined()
          else expect(res.headers[header]).toMatch(pattern)
        }
      })

      it('legacy reset is epoch seconds, not before Retry-After', async () => {
        const send = await appWith({ limit: 1, window: '1m', headers: 'legacy' })
        await send('/')
        const res = await send('/')
        expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(
          Math.floor(Date.now() / 1000) + Number(res.headers['retry-after']),
        )
      })
    })

    describe('limited response', () => {
      it('answers 429 with Retry-After and an RFC 9457 quota-exceeded problem', async () => {
        const send = await appWith({ limit: 1, window: '1m' })
        await send('/')
        const res = await send('/')
        expect(res.status).toBe(429)
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
        const retryAfter = Number(res.headers['retry-after'])
        // the default gcra: never later than a window
        expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true)
        expect(res.headers.ratelimit).toBe(`"gc1/1m";r=0;t=${retryAfter}`)
        const body = json(res)
        expect(body).toMatchObject({
          type: QUOTA_EXCEEDED,
          status: 429,
          'violated-policies': ['gc1/1m'],
        })
        expect(body.title).toEqual(expect.any(String))
        expect(body.detail).toMatch(
          /^The limit is 1 request per 1 minute\. Retry in \d+ seconds?\.$/,
        )
      })

      it.each<[string, ContractOptions, number, RegExp, string]>([
        ['string', { message: 'Slow down' }, 429, /^text\/plain/, 'Slow down'],
        [
          'object',
          { message: { error: 'slow down' } },
          429,
          /^application\/json/,
          '{"error":"slow down"}',
        ],
        [
          'callback',
          { message: harness.callbacks.pathMessage },
          429,
          /^application\/json/,
          '{"path":"/"}',
        ],
        ['async callback', { message: async () => 'later' }, 429, /^text\/plain/, 'later'],
        ['statusCode', { statusCode: 503, message: 'busy' }, 503, /^text\/plain/, 'busy'],
      ])('message: %s', async (_name, options, status, contentType, text) => {
        const send = await appWith({ limit: 1, window: '1m', ...options })
        await send('/')
        const res = await send('/')
        expect(res.status).toBe(status)
        expect(res.headers['content-type']).toMatch(contentType)
        expect(res.body).toBe(text)
        expect(res.headers['retry-after']).toMatch(/^\d+$/)
      })

      it('an onLimited that throws goes to the error handler', async () => {
        const send = await appWith({
          limit: 1,
          window: '1m',
          onLimited: () => {
            throw new Error('custom handler broke')
          },
        })
        await send('/')
        const res = await send('/')
        expect(res.status).toBe(500)
        expect(json(res).message).toBe('custom handler broke')
      })

      it("a store failure with failureMode 'closed' answers 503, not 429", async () => {
        const down = {
          consume: () => Promise.reject(new Error('connection refused')),
          refund: () => Promise.resolve(),
          reset: () => Promise.resolve(),
        }
        const send = await appWith({
          limit: 5,
          window: '1m',
          store: down,
          failureMode: 'closed',
          onError: () => {},
        })
        const res = await send('/')
        expect(res.status).toBe(503)
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
        expect(res.headers['retry-after']).toMatch(/^\d+$/)
      })
    })

    describe('failing open claims no quota', () => {
      const down = () => ({
        consume: () => Promise.reject(new Error('connection refused')),
        refund: () => Promise.resolve(),
        reset: () => Promise.resolve(),
      })
      it.each<[string, ContractOptions['headers']]>([
        ['draft-10', 'draft-10'],
        ['draft-7', 'draft-7'],
        ['draft-6 and legacy', ['draft-6', 'legacy']],
      ])('%s: the policy stays, no remaining or reset field', async (_name, headers) => {
        const send = await appWith({
          limit: 5,
          window: '1m',
          store: down(),
          failureMode: 'open',
          onError: () => {},
          headers,
        })
        const res = await send('/')
        expect(res.status).toBe(200)
        expect(res.headers['ratelimit-policy']).toBeDefined()
        for (const field of [
          'ratelimit',
          'ratelimit-remaining',
          'ratelimit-reset',
          'x-ratelimit-remaining',
          'x-ratelimit-reset',
        ])
          expect(res.headers[field], field).toBeUndefined()
        if (headers !== 'draft-10' && headers !== 'draft-7')
          expect(res.headers['x-ratelimit-limit']).toBe('5')
        expect(json(res).rateLimit.source).toBe('fail-open')
      })

      it("failureMode 'local' decides in process and keeps its honest headers", async () => {
        const send = await appWith({
          limit: 5,
          window: '1m',
          store: down(),
          failureMode: 'local',
          onError: () => {},
        })
        await send('/')
        const res = await send('/')
        expect(res.status).toBe(200)
        expect(res.headers.ratelimit).toMatch(/^"gc5\/1m";r=3;t=\d+$/)
        expect(json(res).rateLimit.source).toBe('local')
      })

      it('a decision the store made says so', async () => {
        const res = await (await appWith({ limit: 5, window: '1m' }))('/')
        expect(json(res).rateLimit.source).toBe('store')
      })
    })

    describe('warnings, once per limiter', () => {
      const warned = async (
        options: ContractOptions,
        requests: Array<[string, Record<string, string>?]>,
      ) => {
        const answers: Reply[] = []
        const warnings = await warningsDuring(async () => {
          const send = await appWith(options)
          for (const [path, headers] of requests) answers.push(await send(path, headers))
        })
        return { answers, warnings }
      }

      it.each([
        ['login:undefined', 'undefined'],
        ['undefined', 'undefined'],
        ['user/null/orders', 'null'],
        ['q=NaN', 'NaN'],
        ['k|[object Object]', '[object Object]'],
      ])('a key like %s is flagged, and still counted under that key', async (key, word) => {
        const { answers, warnings } = await warned({ limit: 1, window: '1m', key: () => key }, [
          ['/'],
          ['/'],
          ['/'],
        ])
        expect(answers.map((a) => a.status)).toEqual([200, 429, 429])
        expect(warnings).toHaveLength(1)
        expect(warnings[0]?.name).toBe('LimiterWarning')
        expect(warnings[0]?.code).toBe('LIMITER_SUSPICIOUS_KEY')
        expect(warnings[0]?.message).toContain(JSON.stringify(key))
        expect(warnings[0]?.message).toContain(`"${word}"`)
      })

      it.each(['undefinedx', 'nullable:1', 'NaNa', 'user:42'])(
        'a key like %s is not flagged',
        async (key) => {
          const { warnings } = await warned({ limit: 5, window: '1m', key: () => key }, [['/']])
          expect(warnings).toHaveLength(0)
        },
      )

      it.each([
        ['X-Forwarded-For', { 'x-forwarded-for': '203.0.113.7' }],
        ['Forwarded', { forwarded: 'for=203.0.113.7' }],
      ])('a %s header the framework ignores is pointed out', async (_name, headers) => {
        const { warnings } = await warned({ limit: 5, window: '1m' }, [
          ['/'],
          ['/', headers],
          ['/', headers],
        ])
        expect(warnings).toHaveLength(1)
        expect(warnings[0]?.code).toBe('LIMITER_FORWARDED_IGNORED')
        expect(warnings[0]?.message).toMatch(/trust/)
      })

      it('warnings: false silences both', async () => {
        const { warnings } = await warned(
          { limit: 5, window: '1m', key: () => 'login:undefined', warnings: false },
          [['/', { 'x-forwarded-for': '203.0.113.7' }]],
        )
        expect(warnings).toHaveLength(0)
      })
    })

    describe('refunds', () => {
      it.each<[string, ContractOptions, number, number]>([
        ['skipSuccessfulRequests refunds a 200', { skipSuccessfulRequests: true }, 200, 3],
        ['skipSuccessfulRequests keeps a 500', { skipSuccessfulRequests: true }, 500, 0],
        ['skipFailedRequests refunds a 404', { skipFailedRequests: true }, 404, 3],
        ['skipFailedRequests keeps a 302', { skipFailedRequests: true }, 302, 0],
      ])('%s, exactly once per request', async (_name, options, status, refunds) => {
        const store = countingStore(harness.store())
        const send = await appWith({ limit: 2, window: '1m', store, ...options })
        for (let i = 0; i < 3; i++) {
          const res = await send(`/?status=${status}`)
          expect(res.status).toBe(refunds > 0 || i < 2 ? status : 429)
        }
        // Refunds fire when the response finishes, after the client has its answer.
        await new Promise((r) => setTimeout(r, 20))
        expect(store.refunds).toBe(refunds)
      })
    })

    describe('options', () => {
      it('skip lets requests through uncounted and without headers', async () => {
        const store = countingStore(harness.store())
        const send = await appWith({
          limit: 1,
          window: '1m',
          store,
          skip: harness.callbacks.skipInternal,
        })
        for (let i = 0; i < 3; i++) {
          const res = await send('/', { 'x-internal': 'yes' })
          expect(res.status).toBe(200)
          expect(res.headers.ratelimit).toBeUndefined()
          expect(json(res).rateLimit).toBeUndefined()
        }
        expect(store.consumes).toBe(0)
        expect((await send('/')).status).toBe(200)
      })

      it('cost callback charges each request its cost', async () => {
        const send = await appWith({
          limit: 10,
          window: '1m',
          cost: harness.callbacks.costFromQuery,
        })
        expect((await send('/?cost=4')).headers.ratelimit).toMatch(/;r=6;/)
        expect((await send('/?cost=6')).headers.ratelimit).toMatch(/;r=0;/)
        expect((await send('/?cost=1')).status).toBe(429)
      })

      it.each<[string, () => unknown, RegExp]>([
        [
          'throws',
          () => {
            throw new Error('no session')
          },
          /^rateLimit option `key` threw: no session$/,
        ],
        [
          'rejects',
          async () => {
            throw new Error('lookup failed')
          },
          /^rateLimit option `key` threw: lookup failed$/,
        ],
        ['returns an empty string', () => '', /^rateLimit option `key` returned an empty string/],
        ['returns undefined', () => undefined, /^rateLimit option `key` returned undefined/],
        ['returns NaN', () => Number.NaN, /^rateLimit option `key` returned number NaN/],
        ['returns Infinity', () => Infinity, /^rateLimit option `key` returned number Infinity/],
        ['returns null', () => null, /^rateLimit option `key` returned null/],
        ['returns an object', () => ({ id: 7 }), /^rateLimit option `key` returned an object/],
      ])(
        'a key callback that %s goes to the error handler, naming `key`',
        async (_name, key, message) => {
          const res = await (await appWith({ limit: 5, window: '1m', key }))('/')
          expect(res.status).toBe(500)
          expect(json(res).message).toMatch(message)
          expect(json(res).code).toBe('ERR_LIMITER_KEY')
        },
      )

      it('a numeric key is a key: 7, 7n and "7" share one counter', async () => {
        let next: unknown = 7
        const send = await appWith({ limit: 3, window: '1m', key: () => next })
        expect((await send('/')).status).toBe(200)
        next = 7n
        expect((await send('/')).status).toBe(200)
        next = '7'
        const third = await send('/')
        expect(third.status).toBe(200)
        expect(third.headers.ratelimit).toMatch(/;r=0;/)
        next = 8
        expect((await send('/')).status).toBe(200)
        next = Promise.resolve(7)
        expect((await send('/')).status).toBe(429)
      })

      it.each<[string, ContractOptions, RegExp]>([
        ['cost', { cost: () => 99 }, /^rateLimit option `cost` returned number 99/],
        [
          'skip',
          {
            skip: () => {
              throw new Error('flag service down')
            },
          },
          /^rateLimit option `skip` threw: flag service down/,
        ],
        [
          'message',
          { limit: 1, message: () => undefined },
          /^rateLimit option `message` returned undefined/,
        ],
        [
          'message (a number)',
          { limit: 1, message: () => 42 },
          /^rateLimit option `message` returned number 42/,
        ],
      ])(
        '%s: a misbehaving callback goes to the error handler, naming it',
        async (_name, options, message) => {
          const send = await appWith({ limit: 5, window: '1m', ...options })
          let res = await send('/')
          if (options.limit === 1) res = await send('/')
          expect(res.status).toBe(500)
          expect(json(res).message).toMatch(message)
        },
      )

      it.each<[string, ContractOptions, RegExp]>([
        ['limit', { limit: -1, window: '1m' }, /`limit`/],
        ['window', { limit: 1, window: 'soon' }, /`window`/],
        [
          'redis',
          { limit: 1, window: '1m', store: harness.store(), redis: { evalsha() {}, eval() {} } },
          /`redis`/,
        ],
        ['headers', { limit: 1, window: '1m', headers: 'draft-8' }, /`headers`/],
        ['key', { limit: 1, window: '1m', key: 'ip' }, /`key`/],
        ['onLimited', { limit: 1, window: '1m', onLimited: 429 }, /`onLimited`/],
        ['max', { max: 5, windowMs: 1000 }, /`max`.*did you mean `limit`/],
        ['statusCode', { limit: 1, window: '1m', statusCode: 200 }, /`statusCode`/],
        ['cost', { limit: 2, window: '1m', cost: 3 }, /`cost`/],
        ['failureMode', { limit: 1, window: '1m', failureMode: 'maybe' }, /`failureMode`/],
      ])('invalid option %s fails at setup, naming it', async (option, options, message) => {
        const errors = await harness.optionErrors(options)
        expect(errors.length).toBeGreaterThan(0)
        for (const error of errors) {
          expect(error).toBeInstanceOf(Error)
          const { message: text, option: named } = error as Error & { option?: string }
          expect(text).toMatch(message)
          expect(named).toBe(option)
          expect(error instanceof TypeError || error instanceof RangeError).toBe(true)
        }
      })

      it('the decision reaches later handlers', async () => {
        const res = await (await appWith({ limit: 5, window: '1m' }))('/')
        expect(json(res).rateLimit).toMatchObject({
          allowed: true,
          limit: 5,
          remaining: 4,
          retryAfterMs: 0,
        })
      })
    })
  })
}
