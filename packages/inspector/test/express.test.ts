import type { AddressInfo } from 'node:net'
import express5 from 'express'
import express4 from 'express4'
import { expressInspector } from '../src/index.js'
import { describeInspectorContract } from './contract.js'

for (const [name, express] of [
  ['express4', express4],
  ['express5', express5],
] as const) {
  describeInspectorContract(name, async (page, limiter, prefix) => {
    const app = express()
    // The app's own parsers: the mount re-encodes what they read.
    app.use(express.urlencoded({ extended: false }))
    app.use(express.json())
    app.get('/hit', async (req, res) => {
      const decision = await limiter.consume(String(req.query.key))
      res.status(decision.allowed ? 200 : 429).end()
    })
    app.use(prefix || '/', expressInspector(page))
    const server = app.listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
    const { port } = server.address() as AddressInfo
    return {
      url: `http://127.0.0.1:${port}`,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    }
  })
}
