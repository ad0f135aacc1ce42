// The types a Hono app sees: options typed with its own Env, the middleware accepted by app.use
// and routes, c.get('rateLimit') through ContextVariableMap.
import { Hono } from 'hono'
import { describe, expectTypeOf, it } from 'vitest'
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
})
