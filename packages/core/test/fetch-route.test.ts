// withRateLimit: a route handler (Next.js App Router style) behind a Fetch limiter, through the
// public subpath. The client address defaults to the right-most X-Forwarded-For entry.
import { describe, expect, it, vi } from 'vitest'
import { warningsDuring } from '../../../test-support/adapter-helpers.js'
import { createFetchLimiter, withRateLimit } from '../src/fetch/index.js'
import { MemoryStore } from '../src/index.js'

const get = (xff?: string) =>
  new Request(
    'http://app.test/api',
    xff === undefined ? {} : { headers: { 'x-forwarded-for': xff } },
  )

describe('withRateLimit', () => {
  it('passes the request and the rest through, adds headers, refuses past the limit', async () => {
    const seen: unknown[] = []
    const GET = withRateLimit(
      async (request: Request, context: { params: Promise<{ id: string }> }) => {
        seen.push((await context.params).id, new URL(request.url).pathname)
        return new Response('ok')
      },
      { limit: 2, window: '1m', store: new MemoryStore(), name: 'api' },
    )
    const context = { params: Promise.resolve({ id: '7' }) }
    const first = await GET(get('203.0.113.1'), context)
    expect(first.status).toBe(200)
    expect(first.headers.get('ratelimit')).toBe('"api";r=1;t=30')
    expect((await GET(get('203.0.113.1'), context)).status).toBe(200)
    const refused = await GET(get('203.0.113.1'), context)
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).not.toBeNull()
    expect(seen).toEqual(['7', '/api', '7', '/api'])
  })

  it('keys by the right-most X-Forwarded-For entry by default (trustProxy: 1)', async () => {
    const GET = withRateLimit(async () => new Response('ok'), { limit: 1, window: '1m' })
    expect((await GET(get('10.1.1.1, 203.0.113.5'))).status).toBe(200)
    // a different left-most entry, the same right-most: the same client
    expect((await GET(get('10.2.2.2, 203.0.113.5'))).status).toBe(429)
    expect((await GET(get('203.0.113.6'))).status).toBe(200)
  })

  // `next start` alone keeps a client's own X-Forwarded-For: the default is right only behind a
  // proxy, so off Vercel a limiter on it says so once.
  describe('the default trustProxy off Vercel', () => {
    let made = 0
    // each limiter named apart: a warning late from another test is not counted
    const warned = async (options: Record<string, unknown>, vercel = '') => {
      const name = `default-trust-${++made}`
      vi.stubEnv('VERCEL', vercel)
      try {
        return await warningsDuring(async () => {
          const GET = withRateLimit(async () => new Response('ok'), {
            limit: 1,
            window: '1m',
            name,
            ...options,
          })
          expect((await GET(get('203.0.113.1'))).status).toBe(200)
          expect((await GET(get('203.0.113.2'))).status).toBe(200)
        }).then((all) => all.filter((w) => w.message.includes(`"${name}"`)))
      } finally {
        vi.unstubAllEnvs()
      }
    }

    it('is pointed out once, saying what to do', async () => {
      const warnings = await warned({})
      expect(warnings.map((w) => w.code)).toEqual(['LIMITER_TRUST_PROXY_DEFAULT'])
      expect(warnings[0]?.message).toMatch(/`next start` with nothing in front keeps/)
      expect(warnings[0]?.message).toMatch(/pass `trustProxy: 1`.*or pass a `key`/)
    })

    it.each<[string, Record<string, unknown>, string]>([
      ['on Vercel', {}, '1'],
      ['with trustProxy given', { trustProxy: 1 }, ''],
      ['with warnings: false', { warnings: false }, ''],
      ['with a key of its own', { key: (r: Request) => r.headers.get('x-forwarded-for') }, ''],
    ])('is not given %s', async (_name, options, vercel) => {
      expect(await warned(options, vercel)).toEqual([])
    })
  })

  it('without an address it rejects with ERR_LIMITER_KEY, never one shared counter', async () => {
    const GET = withRateLimit(async () => new Response('ok'), { limit: 1, window: '1m' })
    await expect(GET(get())).rejects.toMatchObject({ code: 'ERR_LIMITER_KEY' })
  })

  it('an explicit ip or trustProxy wins over the default', async () => {
    const byIp = withRateLimit(async () => new Response('ok'), {
      limit: 1,
      window: '1m',
      ip: (request) => request.headers.get('x-real-ip'),
      warnings: false,
    })
    const real = (ip: string) =>
      new Request('http://app.test/', {
        headers: { 'x-real-ip': ip, 'x-forwarded-for': '1.1.1.1' },
      })
    expect((await byIp(real('192.0.2.1'))).status).toBe(200)
    expect((await byIp(real('192.0.2.2'))).status).toBe(200)
    const untrusted = withRateLimit(async () => new Response('ok'), {
      limit: 1,
      window: '1m',
      trustProxy: false,
    })
    await expect(untrusted(get('203.0.113.1'))).rejects.toMatchObject({ code: 'ERR_LIMITER_KEY' })
  })

  it('one FetchLimiter shared by two handlers is one budget', async () => {
    const limit = createFetchLimiter({ limit: 2, window: '1m', trustProxy: 1 })
    const GET = withRateLimit(async () => new Response('get'), limit)
    const POST = withRateLimit(async () => new Response('post'), limit)
    expect((await GET(get('203.0.113.1'))).status).toBe(200)
    expect((await POST(get('203.0.113.1'))).status).toBe(200)
    expect((await GET(get('203.0.113.1'))).status).toBe(429)
  })

  it('bad options throw at construction', () => {
    expect(() => withRateLimit(async () => new Response(), { limit: -1, window: '1m' })).toThrow(
      RangeError,
    )
  })
})
