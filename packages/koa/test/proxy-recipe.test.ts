// The README's proxy recipe, `new Koa({ proxy: true, maxIpsCount: 1 })`, on Koa 2 and 3: behind
// one proxy, clients the proxy forwards get a budget each; without the recipe they all share the
// proxy's; with `proxy` but no `maxIpsCount`, a client picks its own address.
import request from 'supertest'
import { describe } from 'vitest'
import { describeProxyRecipe } from '../../../test-support/proxy-recipe.js'
import { rateLimit } from '../src/index.js'
import { countingStore, KOA } from './helpers.js'

const OPTIONS = { recipe: { proxy: true, maxIpsCount: 1 }, none: {}, forgeable: { proxy: true } }

describe.each(KOA)('$version', ({ Koa }) => {
  describeProxyRecipe(
    {
      recipe:
        'with new Koa({ proxy: true, maxIpsCount: 1 }), two forwarded clients get a budget each',
      forgeable:
        'with proxy but no maxIpsCount, a client that forges the header gets fresh budgets',
      advice: 'app.maxIpsCount = 1',
    },
    (setting) => {
      const store = countingStore()
      const app = new Koa(OPTIONS[setting])
      app.use(rateLimit({ limit: 1, window: '1m', store }))
      app.use((ctx) => {
        ctx.body = 'ok'
      })
      const handler = app.callback()
      const status = async (headers: Record<string, string>) =>
        (await request(handler).get('/').set(headers)).status
      return { status, store }
    },
  )
})
