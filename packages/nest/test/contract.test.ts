// The guard with the embedded MemoryStore, on Nest's Express and Fastify platforms through
// @nestjs/testing: the shared adapter contract, several limits, concurrency and waiting.
import { createLimiter, MemoryStore } from '@limiter/core'
import { describe } from 'vitest'
import { describeMemoryContracts } from '../../../test-support/shared-contracts.js'
import { harness, PLATFORMS } from './helpers.js'

describe.each(PLATFORMS)('nest on $platform', (platform) => {
  describeMemoryContracts(harness(platform), { store: () => new MemoryStore(), createLimiter })
})
