// The README's proxy recipe, `app.set('trust proxy', 1)`, on Express 4 and 5: behind one proxy,
// clients the proxy forwards get a budget each; without the recipe they all share the proxy's;
// with `true` instead of the number of proxies, a client picks its own address.
import request from 'supertest'
import { describe } from 'vitest'
import { describeProxyRecipe } from '../../../test-support/proxy-recipe.js'
import { rateLimit } from '../src/index.js'
import { countingStore, EXPRESS } from './helpers.js'

const TRUST = { recipe: 1, none: false, forgeable: true } as const

describe.each(EXPRESS)('$version', ({ express }) => {
  describeProxyRecipe(
    {
      recipe: "with app.set('trust proxy', 1), two forwarded clients get a budget each",
      forgeable: "with 'trust proxy' true, a client that forges the header gets fresh budgets",
      advice: "app.set('trust proxy', 1)",
    },
    (setting) => {
      const trust = TRUST[setting]
      const store = countingStore()
      const app = express()
      if (trust !== false) app.set('trust proxy', trust)
      app.use(rateLimit({ limit: 1, window: '1m', store }))
      app.get('/', (_req, res) => {
        res.send('ok')
      })
      const status = async (headers: Record<string, string>) =>
        (await request(app).get('/').set(headers)).status
      return { status, store }
    },
  )
})
