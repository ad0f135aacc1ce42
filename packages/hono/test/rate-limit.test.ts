// rateLimit() on Hono 4, on real @hono/node-server servers with MemoryStore: the shared adapter,
// limits, listening and concurrency contracts.
import { createLimiter, MemoryStore } from '@limiter/core'
import { describe } from 'vitest'
import { describeAdapterContract } from '../../../test-support/adapter-contract.js'
import { describeConcurrencyContract } from '../../../test-support/concurrency-contract.js'
import { describeLimitsContract } from '../../../test-support/limits-contract.js'
import { describeListeningContract } from '../../../test-support/listening-contract.js'
import { harness } from './helpers.js'

describe('hono 4 on @hono/node-server', () => {
  describeAdapterContract('adapter contract', harness())
  describeLimitsContract('several limits', harness())
  describeListeningContract('on a listening server', harness())
  describeConcurrencyContract('concurrency and waiting', harness(), {
    store: () => new MemoryStore(),
    createLimiter,
  })
})
