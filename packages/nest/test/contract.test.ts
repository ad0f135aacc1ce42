// The guard with the embedded MemoryStore, on Nest's Express and Fastify platforms through
// @nestjs/testing: the shared adapter contract, several limits, concurrency and waiting.
import { createLimiter, MemoryStore } from '@limiter/core'
import { describe } from 'vitest'
import { describeAdapterContract } from '../../../test-support/adapter-contract.js'
import { describeConcurrencyContract } from '../../../test-support/concurrency-contract.js'
import { describeLimitsContract } from '../../../test-support/limits-contract.js'
import { harness, PLATFORMS } from './helpers.js'

describe.each(PLATFORMS)('nest on $platform', (platform) => {
  describeAdapterContract('adapter contract', harness(platform))
  describeLimitsContract('several limits', harness(platform))
  describeConcurrencyContract('concurrency and waiting', harness(platform), {
    store: () => new MemoryStore(),
    createLimiter,
  })
})
