// Test support: `limits` (several policies on one key, fixed or chosen per request) through
// every adapter, with the harness of the adapter contract.
import { parseList } from 'structured-headers'
import { describe, expect, it } from 'vitest'
import type { AdapterHarness, ContractOptions, Reply } from './harness.js'

const QUOTA_EXCEEDED = 'https://iana.org/assignments/http-problem-types#quota-exceeded'

// A draft-10 field as [name, parameters] per member (throws unless it is a valid SF List).
function members(reply: Reply, field: string): Array<[string, Record<string, unknown>]> {
  const value = reply.headers[field]
  expect(typeof value, field).toBe('string')
  return parseList(value as string).map(([item, params]) => [
    String(item),
    Object.fromEntries(params),
  ])
}

// Two policies: 2 per minute (tight) and 5 per hour (roomy).
const TWO: ContractOptions = {
  limits: [
    { name: 'minute', limit: 2, window: '1m', algorithm: 'fixed-window' },
    { name: 'hour', limit: 5, window: '1h', algorithm: 'fixed-window' },
  ],
}

// A plan from the `x-plan` header (every framework's request, or Koa's context, has `headers`).
type WithHeaders = { readonly headers: Record<string, string | string[] | undefined> }
const plan = (req: WithHeaders) => req.headers['x-plan']

/** Runs the `limits` behaviour every adapter shares against `harness`. */
export function describeLimitsContract(name: string, harness: AdapterHarness): void {
  const json = (reply: Reply) => JSON.parse(reply.body)

  describe(name, () => {
    it('draft-10 headers carry one member per policy, as SF Lists', async () => {
      const send = await harness.app(TWO)
      const res = await send('/')
      expect(res.status).toBe(200)
      expect(res.headers['ratelimit-policy']).toBe('"minute";q=2;w=60, "hour";q=5;w=3600')
      expect(members(res, 'ratelimit-policy')).toEqual([
        ['minute', { q: 2, w: 60 }],
        ['hour', { q: 5, w: 3600 }],
      ])
      expect(members(res, 'ratelimit')).toEqual([
        ['minute', { r: 1, t: 60 }],
        ['hour', { r: 4, t: 3600 }],
      ])
    })

    it('a refusal counts in no policy, names exactly the refusing ones, and says when to retry', async () => {
      const send = await harness.app(TWO)
      await send('/')
      await send('/')
      const refused = await send('/')
      expect(refused.status).toBe(429)
      const retryAfter = Number(refused.headers['retry-after'])
      expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true)
      expect(members(refused, 'ratelimit')).toEqual([
        ['minute', { r: 0, t: retryAfter }],
        ['hour', { r: 3, t: 3600 }],
      ])
      const body = json(refused)
      expect(body).toMatchObject({ type: QUOTA_EXCEEDED, 'violated-policies': ['minute'] })
      expect(body.detail).toMatch(/^The "minute" limit is 2 requests per 1 minute\. Retry in/)
      // refused again: the hour still holds 3, not fewer
      expect(members(await send('/'), 'ratelimit')[1]).toEqual(['hour', { r: 3, t: 3600 }])
    })

    it('older header standards describe the most constraining policy', async () => {
      const send = await harness.app({ ...TWO, headers: ['draft-7', 'legacy'] })
      const res = await send('/')
      expect(res.headers['ratelimit-policy']).toBe('2;w=60')
      expect(res.headers.ratelimit).toBe('limit=2, remaining=1, reset=60')
      expect(res.headers['x-ratelimit-limit']).toBe('2')
      expect(res.headers['x-ratelimit-remaining']).toBe('1')
    })

    it('limits chosen per request: each plan its own numbers, its own counters', async () => {
      const send = await harness.app({
        limits: (req: WithHeaders) =>
          plan(req) === 'pro'
            ? { limit: 3, window: '1m', algorithm: 'fixed-window' }
            : { limit: 1, window: '1m', algorithm: 'fixed-window' },
      })
      const free = () => send('/', { 'x-plan': 'free' })
      const pro = () => send('/', { 'x-plan': 'pro' })
      expect((await free()).status).toBe(200)
      expect((await free()).status).toBe(429)
      const res = await pro()
      expect(res.status).toBe(200)
      expect(res.headers['ratelimit-policy']).toBe('"fw3/1m";q=3;w=60')
      expect((await pro()).status).toBe(200)
      expect((await pro()).status).toBe(200)
      expect((await pro()).status).toBe(429)
    })

    it('with a shared name, a caller moving from one plan to another keeps their count', async () => {
      const send = await harness.app({
        limits: async (req: WithHeaders) => [
          {
            name: 'minute',
            limit: plan(req) === 'pro' ? 4 : 2,
            window: '1m',
            algorithm: 'fixed-window',
          },
        ],
      })
      expect((await send('/', { 'x-plan': 'free' })).status).toBe(200)
      expect((await send('/', { 'x-plan': 'free' })).status).toBe(200)
      expect((await send('/', { 'x-plan': 'free' })).status).toBe(429)
      // upgraded: the two already used still count against the new limit of 4
      const res = await send('/', { 'x-plan': 'pro' })
      expect(res.status).toBe(200)
      expect(members(res, 'ratelimit')).toEqual([['minute', { r: 1, t: 60 }]])
      expect((await send('/', { 'x-plan': 'pro' })).status).toBe(200)
      expect((await send('/', { 'x-plan': 'pro' })).status).toBe(429)
    })

    it('a throwing `limits` function or a bad policy fails the request naming `limits`; the server keeps serving', async () => {
      const send = await harness.app({
        limits: (req: WithHeaders) => {
          if (plan(req) === 'broken') throw new Error('plan service down')
          if (plan(req) === 'bad') return { limit: 0, window: '1m' }
          return { limit: 5, window: '1m' }
        },
      })
      const thrown = await send('/', { 'x-plan': 'broken' })
      expect(thrown.status).toBe(500)
      expect(json(thrown).message).toMatch(/`limits` threw: plan service down/)
      const bad = await send('/', { 'x-plan': 'bad' })
      expect(bad.status).toBe(500)
      expect(json(bad).message).toMatch(
        /`limits` returned policies that are not valid.*`limits\[0\]\.limit`/,
      )
      expect((await send('/', { 'x-plan': 'fine' })).status).toBe(200)
    })

    it('refuses `limits` with a one-policy option at construction, naming both', async () => {
      const errors = await harness.optionErrors({ ...TWO, limit: 5 })
      for (const error of errors)
        expect(String(error)).toMatch(/`limit`.*cannot be combined with `limits`/)
    })
  })
}
