// hono-rate-limiter's options (the README's migration table): the renamed ones are refused at
// construction with the name to use here, and the ones kept work as they did there.
import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { rateLimit } from '../src/index.js'

const base = { window: '1m', limit: 1 } as const

describe("hono-rate-limiter's options", () => {
  it.each([
    [{ windowMs: 15 * 60 * 1000, limit: 1 }, "did you mean `window`? express-rate-limit's"],
    [{ ...base, keyGenerator: () => 'k' }, 'did you mean `key`?'],
    [{ ...base, standardHeaders: 'draft-6' }, 'did you mean `headers`?'],
    [
      { ...base, handler: () => new Response('x') },
      "hono-rate-limiter's `handler` is `onLimited` here",
    ],
    [{ ...base, requestPropertyName: 'rl' }, "`c.get('rateLimit')` (Hono)"],
    [{ ...base, requestStorePropertyName: 'rls' }, "`c.get('rateLimit')` (Hono)"],
    [{ window: '1m', limit: () => 5 }, 'is `limits: (req) => ({ limit: n, window:'],
  ])('%o is refused with a hint', (options, hint) => {
    expect(() => rateLimit(options as never)).toThrow(hint)
  })

  // Regression: an array (hono-rate-limiter has none, but a `limits` list passed whole is easy to
  // write) was spread into options named `0`, `1`: "Invalid `0`: is not an option".
  it('an array of options is refused as Express and Koa refuse it', () => {
    expect(() => rateLimit([base] as never)).toThrow(
      'Invalid `options`: expected an object, got an array.',
    )
  })

  it('the windowMs hint converts the value', () => {
    expect(() => rateLimit({ windowMs: 15 * 60 * 1000, limit: 1 } as never)).toThrow(
      "use `window: '15m'`",
    )
  })

  it('skip, message and statusCode keep their names and meaning', async () => {
    const app = new Hono()
    app.use(
      rateLimit({
        ...base,
        key: () => 'one',
        skip: (c) => c.req.path === '/health',
        message: 'slow down',
        statusCode: 503,
      }),
    )
    app.get('*', (c) => c.text('ok'))
    expect((await app.request('/')).status).toBe(200)
    expect((await app.request('/health')).status).toBe(200)
    const refused = await app.request('/')
    expect(refused.status).toBe(503)
    expect(await refused.text()).toContain('slow down')
  })
})
