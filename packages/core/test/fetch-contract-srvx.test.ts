// createFetchLimiter served by srvx (Node adapter; the client address from `request.ip`): the
// shared adapter, limits and concurrency contracts, on MemoryStore.
import { type ServerRequest, serve } from 'srvx'
import { afterAll, describe } from 'vitest'
import { describeAdapterContract } from '../../../test-support/adapter-contract.js'
import { describeConcurrencyContract } from '../../../test-support/concurrency-contract.js'
import { fetchHarness, type ServeFetch } from '../../../test-support/fetch-harness.js'
import { describeLimitsContract } from '../../../test-support/limits-contract.js'
import { createFetchLimiter } from '../src/fetch/index.js'
import { createLimiter, MemoryStore } from '../src/index.js'

const open = new Set<() => Promise<void>>()
afterAll(async () => {
  await Promise.all([...open].map((close) => close()))
})

const onSrvx: ServeFetch = async (fetch) => {
  const server = serve({
    port: 0,
    hostname: '127.0.0.1',
    silent: true,
    fetch: (request) => fetch(request, (request as ServerRequest).ip),
  })
  await server.ready()
  const close = async () => {
    open.delete(close)
    await server.close(true)
  }
  open.add(close)
  return { url: (server.url as string).replace(/\/$/, ''), close }
}

const harness = () => fetchHarness(createFetchLimiter, onSrvx, () => new MemoryStore())

describe('createFetchLimiter on srvx', () => {
  describeAdapterContract('adapter contract', harness())
  describeLimitsContract('several limits', harness())
  describeConcurrencyContract('concurrency and waiting', harness(), {
    store: () => new MemoryStore(),
    createLimiter,
  })
})
