import type { AddressInfo } from 'node:net'
import { createLimiter } from '@limiter/core'
import express5 from 'express'
import express4 from 'express4'
import { describe, expect, it } from 'vitest'
import { expressInspector, inspector } from '../src/index.js'
import { describeInspectorContract, whoIs } from './contract.js'

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

describe('express: the inspector mounted without the app parsing bodies', () => {
  it('answers 413 to a body over 64 kB (the mount reads it, and stops)', async () => {
    const limiter = createLimiter({ name: 'express-body', limit: 1, window: '1m' })
    const page = inspector({ limiters: [limiter], authorize: whoIs, actions: true })
    const app = express5()
    app.use('/ops', expressInspector(page))
    const server = app.listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ops`
    const response = await fetch(`${base}/api/block`, {
      method: 'POST',
      headers: { 'x-user': 'admin', 'content-type': 'application/x-www-form-urlencoded' },
      body: `key=big&a=${'x'.repeat(200_000)}`,
    })
    expect(response.status).toBe(413)
    expect((await limiter.peek('big')).allowed).toBe(true)
    page.close()
    server.closeAllConnections() // the client may still be sending the body it was refused
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
})
