// The types a Hono app sees: options typed with its own Env, the middleware accepted by app.use
// and routes, c.get('rateLimit') through ContextVariableMap; other libraries' option names refused.
import { Hono } from 'hono'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { type Decision, type RateLimitVariables, rateLimit } from '../src/index.js'

type AppEnv = { Bindings: { TENANT: string }; Variables: { user: string } & RateLimitVariables }

describe('types', () => {
  it("callbacks see the app's own Env when the middleware is given to it", () => {
    const app = new Hono<AppEnv>()
    app.use(
      rateLimit<AppEnv>({
        limit: 1,
        window: '1m',
        key: (c) => `${c.env.TENANT}:${c.get('user')}`,
        onLimited: (c) => c.json({ tenant: c.env.TENANT }, 429),
      }),
    )
    app.get('/', rateLimit({ limit: 1, window: '1m' }), (c) => {
      expectTypeOf(c.get('rateLimit')).toEqualTypeOf<Decision | undefined>()
      return c.text('ok')
    })
  })

  it('a misspelt option of another library is a compile error', () => {
    // @ts-expect-error `max` is express-rate-limit's name: use `limit`
    expectTypeOf(() => rateLimit({ max: 5, window: '1m' })).toBeFunction()
  })

  it.each([
    [{ windowMs: 1000, limit: 1 }, 'window'],
    [{ window: '1m', limit: 1, keyGenerator: () => 'k' }, 'key'],
    [{ window: '1m', limit: 1, handler: () => {} }, 'onLimited'],
    [{ window: '1m', limit: 1, standardHeaders: 'draft-7' }, 'headers'],
  ])("hono-rate-limiter's names are refused at construction: %o", (options, name) => {
    // `handler` says more than the name: it is called with the Decision, not the options
    expect(() => rateLimit(options as never)).toThrow(
      name === 'onLimited' ? '`handler` is `onLimited` here' : `did you mean \`${name}\`?`,
    )
  })
})
