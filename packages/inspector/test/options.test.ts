import { createLimiter, type Store } from '@limiter/core'
import { describe, expect, it, vi } from 'vitest'
import { hashKey, type Inspector, inspector } from '../src/index.js'
import { clearOfMinuteEdge } from './minute-edge.js'

const limiter = createLimiter({ name: 'options-test', limit: 1, window: '1m' })

describe('inspector options', () => {
  it('refuses to start without authorize', () => {
    expect(() => inspector({ limiters: [limiter] })).toThrow(
      expect.objectContaining({
        name: 'LimiterTypeError',
        code: 'ERR_LIMITER_OPTION',
        option: 'authorize',
      }),
    )
  })

  it('serves anyone with unsafe: true, warning once', async () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {})
    const a = inspector({ limiters: [limiter], unsafe: true })
    const b = inspector({ limiters: [limiter], unsafe: true })
    expect(warn).toHaveBeenCalledTimes(1)
    expect(warn.mock.calls[0]?.[1]).toMatchObject({ code: 'LIMITER_INSPECTOR_UNSAFE' })
    warn.mockRestore()
    const response = await a.handle(new Request('http://x/api/state'), {
      mountPath: '',
      hostRequest: undefined,
    })
    expect(response.status).toBe(200)
    a.close()
    b.close()
  })

  it('is read-only unless actions: true', async () => {
    const page = inspector({ limiters: [limiter], authorize: () => true })
    const response = await page.handle(
      new Request('http://x/api/block', { method: 'POST', body: 'key=a' }),
      { mountPath: '', hostRequest: undefined },
    )
    expect(response.status).toBe(403)
    expect(await response.text()).toMatch(/actions: true/)
    page.close()
  })

  it('rejects bad options with their name and value', () => {
    const authorize = () => true
    expect(() => inspector({ limiters: [], authorize })).toThrow(/`limiters`/)
    expect(() => inspector({ limiters: [limiter], authorize, topK: 3 })).toThrow(RangeError)
    expect(() => inspector({ limiters: [limiter], authorize, store: {} })).toThrow(/`store`/)
  })

  it('shows raw keys with maskKey: false, or a function of its own', async () => {
    await clearOfMinuteEdge()
    const raw = inspector({ limiters: [limiter], authorize: () => true, maskKey: false })
    const mine = inspector({
      limiters: [limiter],
      authorize: () => true,
      maskKey: (k) => `<${k.length}>`,
    })
    await limiter.consume('someone')
    await limiter.consume('someone')
    const top = async (page: typeof raw) => (await page.state()).policies[0]?.top['1m'][0]?.key
    expect(await top(raw)).toBe('someone')
    expect(await top(mine)).toBe('<7>')
    raw.close()
    mine.close()
  })
})

describe('the page size', () => {
  it('stays under 100 kB with 8 limiters of 2 policies, every series drawn, 800 blocks', async () => {
    const limiters = Array.from({ length: 8 }, (_, i) =>
      createLimiter({
        name: `size-${i}`,
        limits: [
          { name: 'a', limit: 1, window: '1m' },
          { name: 'b', limit: 2, window: '1h' },
        ],
      }),
    )
    const page = inspector({ limiters, authorize: () => true, actions: true })
    for (const limiter of limiters) {
      for (let k = 0; k < 30; k++) await limiter.consume(`some-rather-long-client-key:${k % 12}`)
      // 120 blocks each: the list keeps the 100 latest per limiter
      for (let k = 0; k < 120; k++) await limiter.block(`some-rather-long-blocked-key:${k}`, '1h')
    }
    expect((await page.state()).blocks).toHaveLength(800)
    const response = await page.handle(new Request('http://x/'), { mountPath: '', hostRequest: 0 })
    const html = await response.text()
    expect((html.match(/<polyline/g) ?? []).length).toBeGreaterThanOrEqual(16)
    const live = html.slice(0, html.indexOf('<script'))
    expect((live.match(/<button>Unblock<\/button>/g) ?? []).length).toBe(20)
    expect(html).toContain('and 780 more')
    expect(Buffer.byteLength(html)).toBeLessThan(100_000)
    page.close()
  })
})

describe('a failing action', () => {
  it('answers 502 with the reason when the store cannot block', async () => {
    const store: Store = {
      consume: () => Promise.reject(new Error('unused')),
      refund: () => Promise.resolve(),
      reset: () => Promise.resolve(),
      local: true,
    }
    const limiter = createLimiter({ name: 'no-blocks', limit: 1, window: '1m', store })
    const page = inspector({ limiters: [limiter], authorize: () => true, actions: true })
    const token = 'T'.repeat(32)
    const response = await page.handle(
      new Request('http://x/api/block', {
        method: 'POST',
        headers: { cookie: `limiter_inspector_csrf=${token}`, 'x-csrf-token': token },
        body: 'key=a',
      }),
      { mountPath: '', hostRequest: undefined },
    )
    expect(response.status).toBe(502)
    expect(await response.json()).toEqual({
      error: expect.stringMatching(/The action failed: .*block/),
    })
    page.close()
  })
})

/** A POST to `page` with a CSRF cookie and header of `token`. */
function postTo(page: Inspector, action: string, body: object, token = 'T'.repeat(32)) {
  return page.handle(
    new Request(`http://x/api/${action}`, {
      method: 'POST',
      headers: {
        cookie: `limiter_inspector_csrf=${token}`,
        'x-csrf-token': token,
        'content-type': 'application/json',
      },
      body: JSON.stringify(body),
    }),
    { mountPath: '', hostRequest: undefined },
  )
}

describe('labels', () => {
  it('refuses a label several keys share (409), blocking none of them', async () => {
    await clearOfMinuteEdge()
    const limiter = createLimiter({ name: 'labels-shared', limit: 1, window: '1m' })
    const page = inspector({
      limiters: [limiter],
      authorize: () => true,
      actions: true,
      maskKey: (key) => `len:${key.length}`,
    })
    for (const key of ['aaa', 'bbb', 'aaa', 'bbb']) await limiter.consume(key)
    const top = (await page.state()).policies[0]?.top['1m'].map((t) => t.key)
    expect(top).toEqual(['len:3', 'len:3'])
    for (const action of ['block', 'reset']) {
      const response = await postTo(page, action, { key: 'len:3', duration: '1h' })
      expect(response.status).toBe(409)
      expect(await response.json()).toEqual({ error: expect.stringMatching(/ambiguous: 2 keys/) })
    }
    expect((await page.state()).blocks).toEqual([])
    expect((await limiter.peek('len:3')).allowed).toBe(true)
    const lookup = await page.handle(new Request('http://x/api/key?key=len%3A3'), {
      mountPath: '',
      hostRequest: undefined,
    })
    expect(lookup.status).toBe(409)
    page.close()
  })

  it('keys the default labels with `secret` (16 hex digits), and acts on them', async () => {
    await clearOfMinuteEdge()
    const secret = 's'.repeat(32)
    const limiter = createLimiter({ name: 'labels-keyed', limit: 1, window: '1m' })
    const page = inspector({ limiters: [limiter], authorize: () => true, actions: true, secret })
    await limiter.consume('client-1')
    await limiter.consume('client-1')
    const label = (await page.state()).policies[0]?.top['1m'][0]?.key
    expect(label).toBe(hashKey('client-1', secret))
    expect(label).toMatch(/^k:[0-9a-f]{16}…$/)
    expect(label).not.toBe(hashKey('client-1'))
    expect(hashKey('client-1', 't'.repeat(32))).not.toBe(label)
    const token = (await signedToken(page)) as string
    const response = await postTo(page, 'block', { key: label, duration: '1h' }, token)
    expect(response.status).toBe(200)
    expect((await limiter.peek('client-1')).retryAfterMs).toBeGreaterThan(59 * 60_000)
    page.close()
  })

  it('refuses a secret shorter than 32 characters', () => {
    expect(() =>
      inspector({ limiters: [limiter], authorize: () => true, secret: 'short' }),
    ).toThrow(expect.objectContaining({ code: 'ERR_LIMITER_OPTION', option: 'secret' }))
  })
})

/** The CSRF token `page` sets in its cookie. */
async function signedToken(page: Inspector): Promise<string | undefined> {
  const response = await page.handle(new Request('http://x/'), {
    mountPath: '',
    hostRequest: undefined,
  })
  return /limiter_inspector_csrf=([^;]+)/.exec(response.headers.get('set-cookie') ?? '')?.[1]
}

describe('CSRF with `secret`', () => {
  it('refuses a cookie and token planted together; takes the signed one the page set', async () => {
    const secret = 'x'.repeat(40)
    const limiter = createLimiter({ name: 'csrf-signed', limit: 1, window: '1m' })
    const page = inspector({ limiters: [limiter], authorize: () => true, actions: true, secret })
    const planted = await postTo(
      page,
      'block',
      { key: 'victim' },
      'attackerChosen_0123456789abcdef',
    )
    expect(planted.status).toBe(403)
    expect((await limiter.peek('victim')).allowed).toBe(true)
    // another process sharing the secret accepts the token this one set
    const other = inspector({ limiters: [limiter], authorize: () => true, actions: true, secret })
    const token = (await signedToken(page)) as string
    expect(token).toMatch(/^[\w-]{32}\.[\w-]{43}$/)
    expect((await postTo(other, 'block', { key: 'victim' }, token)).status).toBe(200)
    expect((await limiter.peek('victim')).allowed).toBe(false)
    // a process with another secret does not
    const stranger = inspector({
      limiters: [limiter],
      authorize: () => true,
      actions: true,
      secret: 'y'.repeat(40),
    })
    expect((await postTo(stranger, 'reset', { key: 'victim' }, token)).status).toBe(403)
    for (const p of [page, other, stranger]) p.close()
  })
})
