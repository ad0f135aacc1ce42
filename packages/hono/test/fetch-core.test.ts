// @limiter/core/fetch's createFetchLimiter served by @hono/node-server with no Hono app (the
// client address from the Node request the server hands over): the shared adapter, limits and
// concurrency contracts, on MemoryStore.
import type { IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { createLimiter, MemoryStore } from '@limiter/core'
import { createFetchLimiter } from '@limiter/core/fetch'
import { afterAll, describe } from 'vitest'
import { describeAdapterContract } from '../../../test-support/adapter-contract.js'
import { describeConcurrencyContract } from '../../../test-support/concurrency-contract.js'
import { fetchHarness, type ServeFetch } from '../../../test-support/fetch-harness.js'
import { describeLimitsContract } from '../../../test-support/limits-contract.js'

const open = new Set<() => Promise<void>>()
afterAll(async () => {
  await Promise.all([...open].map((close) => close()))
})

const onNodeServer: ServeFetch = async (fetch) => {
  const server = serve({
    port: 0,
    hostname: '127.0.0.1',
    // (the second argument is @hono/node-server's binding: Node's request and response)
    fetch: (request, env) =>
      fetch(request, (env as { incoming: IncomingMessage }).incoming.socket.remoteAddress),
  })
  if (!server.listening) await new Promise((resolve) => server.once('listening', resolve))
  const close = async () => {
    open.delete(close)
    if ('closeAllConnections' in server) server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
  open.add(close)
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close }
}

const harness = () => fetchHarness(createFetchLimiter, onNodeServer, () => new MemoryStore())

describe('createFetchLimiter on @hono/node-server', () => {
  describeAdapterContract('adapter contract', harness())
  describeLimitsContract('several limits', harness())
  describeConcurrencyContract('concurrency and waiting', harness(), {
    store: () => new MemoryStore(),
    createLimiter,
  })
})
