import type { AddressInfo } from 'node:net'
import { bodyParser } from '@koa/bodyparser'
import koa3 from 'koa'
import koa2 from 'koa2'
import { koaInspector } from '../src/index.js'
import { describeInspectorContract } from './contract.js'

for (const [name, Koa] of [
  ['koa2', koa2],
  ['koa3', koa3],
] as const) {
  describeInspectorContract(name, async (page, limiter, prefix) => {
    const app = new Koa()
    app.use(bodyParser()) // the app's own parser: the mount re-encodes what it read
    app.use(async (ctx, next) => {
      if (ctx.path !== '/hit') return next()
      const decision = await limiter.consume(String(ctx.query.key))
      ctx.status = decision.allowed ? 200 : 429
      ctx.body = ''
    })
    app.use(koaInspector(page, { mountPath: prefix }))
    const server = app.listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
    const { port } = server.address() as AddressInfo
    return {
      url: `http://127.0.0.1:${port}`,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    }
  })
}
