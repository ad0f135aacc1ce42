// Test support: the operator options every adapter shares (`deny` and shadow mode), run by
// the adapter contract on each harness.
import { describe, expect, it } from 'vitest'
import { countingStore } from './adapter-helpers.js'
import type { AdapterHarness, ContractOptions, Reply, Send } from './harness.js'

const json = (reply: Reply) => JSON.parse(reply.body)
// new names for the shadow-mode apps, run after run (several frameworks share one process)
let stricter = 0

/** Runs the `deny` and `mode: 'shadow'` cases against `harness`. */
export function describeOperatorCases(
  harness: AdapterHarness,
  appWith: (options: ContractOptions) => Promise<Send>,
): void {
  describe('deny', () => {
    it('answers 403 with a problem document before any counting, and never runs the handler', async () => {
      const store = countingStore(harness.store())
      const send = await appWith({
        limit: 1,
        window: '1m',
        store,
        deny: harness.callbacks.denyBanned,
        // deny is asked first: a denied request is not let through by skip
        skip: harness.callbacks.skipInternal,
      })
      for (let i = 0; i < 3; i++) {
        const res = await send('/', { 'x-banned': 'yes', 'x-internal': 'yes' })
        expect(res.status).toBe(403)
        expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/)
        expect(json(res)).toEqual({
          type: 'about:blank',
          title: 'Forbidden',
          status: 403,
          detail: 'This client may not make this request.',
        })
        expect(res.headers.ratelimit).toBeUndefined()
        expect(res.headers['retry-after']).toBeUndefined()
      }
      expect(store.consumes).toBe(0)
      // the others are limited as usual
      expect((await send('/')).status).toBe(200)
      expect((await send('/')).status).toBe(429)
      expect(store.consumes).toBe(2)
    })

    // deny refused only exactly `true`: a deny list's Map entry or database row never denied
    it.each<[string, (banned: boolean) => unknown]>([
      [
        "a Map's entry",
        (banned) => new Map([['yes', { reason: 'abuse' }]]).get(String(banned && 'yes')),
      ],
      ['an object', (banned) => (banned ? { reason: 'abuse' } : undefined)],
      ['a string', (banned) => (banned ? 'abuse' : '')],
      ['a promise of a row', async (banned) => (banned ? { id: 7 } : null)],
    ])('refuses on any truthy value, as skip does: %s', async (_, value) => {
      const store = countingStore(harness.store())
      const banned = harness.callbacks.denyBanned as (req: unknown) => boolean
      const send = await appWith({
        limit: 1,
        window: '1m',
        store,
        deny: (req: unknown) => value(banned(req)),
      })
      expect((await send('/', { 'x-banned': 'yes' })).status).toBe(403)
      expect(store.consumes).toBe(0)
      expect((await send('/')).status).toBe(200)
      expect(store.consumes).toBe(1)
    })

    it('rejects a deny that is not a function at construction', async () => {
      const [error] = await harness.optionErrors({ limit: 1, window: '1m', deny: ['1.2.3.4'] })
      expect(String(error)).toMatch(/`deny`/)
    })
  })

  describe('shadow mode', () => {
    it('decides and counts, but lets every request through without rate-limit headers', async () => {
      const store = countingStore(harness.store())
      const send = await appWith({ limit: 2, window: '1m', store, mode: 'shadow' })
      const replies: Reply[] = []
      for (let i = 0; i < 4; i++) replies.push(await send('/'))
      for (const res of replies) {
        expect(res.status).toBe(200)
        expect(res.headers.ratelimit).toBeUndefined()
        expect(res.headers['ratelimit-policy']).toBeUndefined()
        expect(res.headers['retry-after']).toBeUndefined()
      }
      // the decisions are the enforced ones: two admitted, then would-be refusals
      expect(replies.map((r) => json(r).rateLimit.allowed)).toEqual([true, true, false, false])
      expect(json(replies[3] as Reply).rateLimit.retryAfterMs).toBeGreaterThan(0)
      expect(store.consumes).toBe(4)
    })

    it('refuses nothing `deny` would refuse: the request goes on, uncounted as when enforced', async () => {
      const store = countingStore(harness.store())
      const send = await appWith({
        limit: 1,
        window: '1m',
        store,
        mode: 'shadow',
        deny: harness.callbacks.denyBanned,
      })
      // (before: 403, though shadow mode never refuses)
      const res = await send('/', { 'x-banned': 'yes' })
      expect(res.status).toBe(200)
      expect(res.headers['retry-after']).toBeUndefined()
      expect(store.consumes).toBe(0)
      expect((await send('/')).status).toBe(200)
      expect(store.consumes).toBe(1)
    })

    it('switching to enforce needs no other change', async () => {
      // a name of its own per run (one name shares one budget, in memory as on Redis)
      const options = { limit: 2, window: '1m', name: `stricter${stricter++}` }
      const shadow = await appWith({ ...options, mode: 'shadow' })
      const enforced = await appWith({ ...options, mode: 'enforce' })
      const shadowed: number[] = []
      const statuses: number[] = []
      for (let i = 0; i < 3; i++) statuses.push((await enforced('/')).status)
      for (let i = 0; i < 3; i++) shadowed.push((await shadow('/')).status)
      expect(shadowed).toEqual([200, 200, 200])
      expect(statuses).toEqual([200, 200, 429])
    })

    it('rejects an unknown mode at construction, naming the option', async () => {
      const [error] = await harness.optionErrors({ limit: 1, window: '1m', mode: 'dry-run' })
      expect(String(error)).toMatch(/`mode`.*'enforce' or 'shadow'/)
    })
  })
}
