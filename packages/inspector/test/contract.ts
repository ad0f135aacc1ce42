// The page's contract, run on each host: mounted at the root and under a prefix, 401/403 without
// authorization, a POST without its CSRF token refused, the JSON API, refused keys after a burst,
// and block then unblock changing the next request's status.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { createLimiter, type Limiter } from '@limiter/core'
import { boundedKey } from '@limiter/core/http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type AuditEvent,
  hashKey,
  type Inspector,
  type InspectorState,
  inspector,
} from '../src/index.js'
import { clearOfMinuteEdge } from './minute-edge.js'

/** A running app: `hit(key)` consumes from the limiter; the page is under `prefix`. */
export interface Host {
  readonly url: string
  close(): Promise<void>
}

/** Who the test says it is, in `x-user`: 'admin' may, 'guest' may not, nobody is unauthenticated. */
export function whoIs(request: Request): boolean | undefined {
  const user = request.headers.get('x-user')
  return user === null ? undefined : user === 'admin'
}

export type Mount = (page: Inspector, limiter: Limiter, prefix: string) => Promise<Host>

const admin = { 'x-user': 'admin' }

async function csrf(base: string): Promise<{ cookie: string; token: string }> {
  const response = await fetch(`${base}/`, { headers: admin })
  const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0] as string
  const html = await response.text()
  const token = /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? ''
  return { cookie, token }
}

function post(base: string, action: string, fields: Record<string, string>, cookie = '') {
  return fetch(`${base}/api/${action}`, {
    method: 'POST',
    headers: { ...admin, cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  })
}

// A block of `key` with the page's own token, sent as from `origin` (a foreign site, a sandbox).
async function blockFrom(base: string, origin: string, key: string): Promise<Response> {
  const { cookie, token } = await csrf(base)
  return fetch(`${base}/api/block`, {
    method: 'POST',
    headers: { ...admin, cookie, origin, 'x-csrf-token': token },
    body: `key=${key}`,
  })
}

export function describeInspectorContract(name: string, mount: Mount): void {
  for (const prefix of ['', '/ops/limits']) {
    describe(`${name}: the inspector mounted at ${prefix === '' ? 'the root' : prefix}`, () => {
      let host: Host
      let page: Inspector
      let base: string
      const limiter = createLimiter({ name: `api-${name}${prefix.length}`, limit: 3, window: '1m' })
      beforeAll(async () => {
        page = inspector({ limiters: [limiter], authorize: whoIs, actions: true })
        host = await mount(page, limiter, prefix)
        base = `${host.url}${prefix}`
      })
      afterAll(async () => {
        page.close()
        await host.close()
      })

      it('answers 401 without credentials and 403 when authorize says no', async () => {
        expect((await fetch(`${base}/`)).status).toBe(401)
        expect((await fetch(`${base}/api/state`)).status).toBe(401)
        const guest = await fetch(`${base}/api/state`, { headers: { 'x-user': 'guest' } })
        expect(guest.status).toBe(403)
      })

      it('serves the page, under 100 kB, with its policies', async () => {
        const response = await fetch(`${base}/`, { headers: admin })
        expect(response.status).toBe(200)
        expect(response.headers.get('content-type')).toMatch(/text\/html/)
        expect(response.headers.get('content-security-policy')).toMatch(/default-src 'none'/)
        const html = await response.text()
        expect(html).toContain(limiter.name)
        expect(html).toContain(`action="${prefix}/api/block"`)
        expect(Buffer.byteLength(html)).toBeLessThan(100_000)
      })

      it('shows every policy in the JSON API', async () => {
        const response = await fetch(`${base}/api/state`, { headers: admin })
        expect(response.status).toBe(200)
        const state = (await response.json()) as InspectorState
        expect(state.policies).toHaveLength(1)
        expect(state.policies[0]).toMatchObject({
          limiter: limiter.name,
          limit: 3,
          windowMs: 60_000,
        })
      })

      it('refuses a POST without its CSRF token, with a wrong one, or from another origin', async () => {
        const { cookie } = await csrf(base)
        expect((await post(base, 'block', { key: 'x' })).status).toBe(403)
        expect((await post(base, 'block', { key: 'x' }, cookie)).status).toBe(403)
        const wrong = await post(base, 'block', { key: 'x', csrf: 'A'.repeat(32) }, cookie)
        expect(wrong.status).toBe(403)
        expect((await blockFrom(base, 'http://evil.example', 'x')).status).toBe(403)
        expect((await limiter.peek('x')).allowed).toBe(true)
      })

      it('lists the refused keys after a burst, masked', async () => {
        await clearOfMinuteEdge()
        for (let i = 0; i < 10; i++) await fetch(`${host.url}/hit?key=noisy-client-7`)
        const response = await fetch(`${base}/api/state`, { headers: admin })
        const state = (await response.json()) as InspectorState
        const policy = state.policies[0] as InspectorState['policies'][number]
        const top = policy.top['1m']
        expect(top[0]).toEqual({ key: hashKey('noisy-client-7'), count: 7, error: 0 })
        expect(JSON.stringify(state)).not.toContain('noisy-client-7')
        expect(policy.rates.refused.reduce((a, b) => a + b, 0)).toBeGreaterThan(0)
      })

      it('acts on a listed key by the label the page shows, never showing the raw key', async () => {
        const label = hashKey('noisy-client-7')
        const lookup = await fetch(`${base}/api/key?key=${encodeURIComponent(label)}`, {
          headers: admin,
        })
        const answer = (await lookup.json()) as {
          key: string
          limiters: Array<{ allowed: boolean }>
        }
        expect(answer.key).toBe(label)
        expect(answer.limiters[0]?.allowed).toBe(false) // the noisy client's state, by its label
        expect((await fetch(`${host.url}/hit?key=noisy-client-7`)).status).toBe(429)
        const { cookie, token } = await csrf(base)
        const reset = await post(base, 'reset', { key: label, csrf: token }, cookie)
        expect(reset.status).toBe(200)
        expect((await fetch(`${host.url}/hit?key=noisy-client-7`)).status).toBe(200)
      })

      it('blocks a key, then unblocks it: the next request follows, each audited', async () => {
        const audits: AuditEvent[] = []
        const listen = (message: unknown) => audits.push(message as AuditEvent)
        subscribe('limiter:audit', listen)
        const { cookie, token } = await csrf(base)
        expect((await fetch(`${host.url}/hit?key=victim`)).status).toBe(200)
        const blocked = await post(
          base,
          'block',
          { key: 'victim', duration: '1h', csrf: token },
          cookie,
        )
        expect(blocked.status).toBe(200)
        expect((await fetch(`${host.url}/hit?key=victim`)).status).toBe(429)
        const reset = await post(base, 'reset', { key: 'victim', csrf: token }, cookie)
        expect(reset.status).toBe(200)
        expect((await fetch(`${host.url}/hit?key=victim`)).status).toBe(200)
        unsubscribe('limiter:audit', listen)
        expect(audits.map((a) => [a.action, a.limiter, a.key, a.durationMs])).toEqual([
          ['block', limiter.name, 'victim', 3_600_000],
          ['reset', limiter.name, 'victim', undefined],
        ])
        expect(audits[0]?.hostRequest).toBeDefined()
      })

      it('lists current blocks and penalties with their ends, each with its unblock form', async () => {
        const state = async () =>
          (await (await fetch(`${base}/api/state`, { headers: admin })).json()) as InspectorState
        expect((await state()).blocks).toEqual([])
        const { cookie, token } = await csrf(base)
        const before = Date.now()
        const blocked = await post(
          base,
          'block',
          { key: 'listed-1', duration: '1h', csrf: token },
          cookie,
        )
        expect(blocked.status).toBe(200)
        await limiter.penalize('penalized-1', 5) // 5 past a limit of 3: refused for a while
        await limiter.penalize('admitted-1') // 1 of 3: still admitted, not a penalty to list
        const { blocks } = await state()
        expect(blocks.map((b) => [b.limiter, b.key, b.kind])).toEqual([
          [limiter.name, hashKey('listed-1'), 'block'],
          [limiter.name, hashKey('penalized-1'), 'penalty'],
        ])
        expect(blocks[0]?.untilMs).toBeGreaterThanOrEqual(before + 3_590_000)
        expect(blocks[0]?.untilMs).toBeLessThanOrEqual(Date.now() + 3_600_000)
        expect(blocks[1]?.untilMs).toBeGreaterThan(before)
        const html = await (await fetch(`${base}/`, { headers: admin })).text()
        const table = /<table class="blocks">.*?<\/table>/s.exec(html)?.[0] ?? ''
        expect(table).toContain(hashKey('listed-1'))
        expect(table).toContain(`action="${prefix}/api/reset"`)
        expect(html).not.toContain('listed-1<')
        // the row's form posts the label; the page finds the key behind it among the blocks
        const unblock = await post(
          base,
          'reset',
          { limiter: limiter.name, key: hashKey('listed-1'), csrf: token },
          cookie,
        )
        expect(unblock.status).toBe(200)
        expect((await fetch(`${host.url}/hit?key=listed-1`)).status).toBe(200)
        expect((await state()).blocks.map((b) => b.key)).toEqual([hashKey('penalized-1')])
        await limiter.reset('penalized-1') // lifted elsewhere: gone from the list at the next read
        expect((await state()).blocks).toEqual([])
      })

      it('previews a threshold from the summaries, changing nothing', async () => {
        const { cookie, token } = await csrf(base)
        const response = await fetch(`${base}/api/preview`, {
          method: 'POST',
          headers: { ...admin, cookie, 'x-csrf-token': token, 'content-type': 'application/json' },
          body: JSON.stringify({ limit: 100 }),
        })
        expect(response.status).toBe(200)
        const body = (await response.json()) as { policies: Array<{ keys: number; of: number }> }
        // noisy-client-7 (7 refusals at a limit of 3) and victim (refused once while blocked)
        // would both pass a limit of 100, and both be refused by a limit of 2.
        expect(body.policies[0]).toMatchObject({ keys: 0, of: 2 })
        const strict = await post(base, 'preview', { limit: '2', csrf: token }, cookie)
        const refused = (await strict.json()) as { policies: Array<{ keys: number }> }
        expect(refused.policies[0]?.keys).toBe(2)
        expect((await limiter.peek('someone-new')).allowed).toBe(true)
      })

      it('refuses a label no key has (unknown, or aged out), blocking nothing', async () => {
        const { cookie, token } = await csrf(base)
        for (const label of [hashKey('never-refused-here'), 'k:0123abcd…']) {
          const blocked = await post(base, 'block', { key: label, csrf: token }, cookie)
          expect(blocked.status).toBe(404)
          expect(await blocked.json()).toEqual({
            error: expect.stringContaining(`has the label ${JSON.stringify(label)}`),
          })
          expect((await limiter.peek(label)).allowed).toBe(true)
          const lookup = await fetch(`${base}/api/key?key=${encodeURIComponent(label)}`, {
            headers: admin,
          })
          expect(lookup.status).toBe(404)
        }
        expect((await limiter.peek('never-refused-here')).allowed).toBe(true)
      })

      it('refuses to act on the label of a key kept as its digest (over 200 bytes)', async () => {
        const long = `long-${'x'.repeat(300)}`
        for (let i = 0; i < 5; i++) await limiter.consume(long)
        const label = hashKey(boundedKey(long))
        const { cookie, token } = await csrf(base)
        const reset = await post(base, 'reset', { key: label, csrf: token }, cookie)
        expect(reset.status).toBe(404)
        expect(await reset.json()).toEqual({
          error: expect.stringContaining('longer than 200 bytes'),
        })
        expect((await limiter.peek(long)).allowed).toBe(false)
      })

      it('refuses a POST from Origin: null, even with its token', async () => {
        expect((await blockFrom(base, 'null', 'from-a-sandbox')).status).toBe(403)
        expect((await limiter.peek('from-a-sandbox')).allowed).toBe(true)
      })

      it('shows only the notices it wrote itself, not a text from a link', async () => {
        const spoof = 'Session expired: sign in again at https://evil.example'
        const linked = await fetch(`${base}/?message=${encodeURIComponent(spoof)}&sig=x`, {
          headers: admin,
        })
        expect(linked.status).toBe(200)
        const html = await linked.text()
        expect(html).not.toContain('Session expired')
        expect(html).not.toContain('class="msg"')
        const { cookie, token } = await csrf(base)
        const form = await fetch(`${base}/api/reset`, {
          method: 'POST',
          redirect: 'manual',
          headers: {
            ...admin,
            cookie,
            accept: 'text/html',
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: new URLSearchParams({ key: 'notice-1', csrf: token }).toString(),
        })
        expect(form.status).toBe(303)
        const back = await fetch(new URL(form.headers.get('location') ?? '', host.url), {
          headers: admin,
        })
        expect(await back.text()).toContain(
          `<p class="msg">Reset notice-1 in ${limiter.name} (any block lifted).</p>`,
        )
      })

      it('answers 400 naming a duration out of range, and 413 to a body over 64 kB', async () => {
        const { cookie, token } = await csrf(base)
        const long = await post(
          base,
          'block',
          { key: 'too-long', duration: '999999999d', csrf: token },
          cookie,
        )
        expect(long.status).toBe(400)
        expect(await long.json()).toEqual({ error: expect.stringContaining('"999999999d"') })
        expect((await limiter.peek('too-long')).allowed).toBe(true)
        const big = await post(
          base,
          'block',
          { key: 'big', csrf: token, a: 'x'.repeat(200_000) },
          cookie,
        )
        expect(big.status).toBe(413)
        expect((await limiter.peek('big')).allowed).toBe(true)
      })

      // The Fetch mounts read a body themselves (the Node mounts' reader has long stopped at
      // 64 kB, and a framework's own body parser may answer first, or reset the upload)
      if (name === 'hono')
        it('answers 413 to a chunked body over 64 kB, reading no further (no Content-Length)', async () => {
          const { cookie, token } = await csrf(base)
          // 4 MB sent in 64 kB chunks: a reader that stops at 64 kB never pulls most of them
          // (before, the Fetch mounts read it whole first)
          let pulled = 0
          const chunk = new TextEncoder().encode('a'.repeat(65_536))
          const body = new ReadableStream<Uint8Array>({
            pull(controller) {
              if (pulled++ < 64) controller.enqueue(chunk)
              else controller.close()
            },
          })
          const status = await fetch(`${base}/api/block?csrf=${token}`, {
            method: 'POST',
            headers: { ...admin, cookie, 'content-type': 'text/plain', 'x-csrf-token': token },
            body,
            duplex: 'half',
          } as RequestInit).then(
            (response) => response.status,
            // the server may close the upload it stopped reading before the client reads the 413
            () => 'reset',
          )
          expect([413, 'reset']).toContain(status)
          expect(pulled).toBeLessThan(64)
        })
    })
  }
}
