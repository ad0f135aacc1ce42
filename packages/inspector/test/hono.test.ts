import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { honoInspector } from '../src/index.js'
import { describeInspectorContract } from './contract.js'

describeInspectorContract('hono', async (page, limiter, prefix) => {
  const app = new Hono()
  app.get('/hit', async (c) => {
    const decision = await limiter.consume(c.req.query('key') ?? '')
    return c.body(null, decision.allowed ? 200 : 429)
  })
  const handler = honoInspector(page, { mountPath: prefix })
  app.all(prefix === '' ? '/' : prefix, handler)
  app.all(`${prefix}/*`, handler)
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' })
  await new Promise((resolve) => server.once('listening', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
})
