// The guard on a real listening Nest server (Express and Fastify platforms), with real fetch and a
// client that aborts early: the shared contract.
import { describe } from 'vitest'
import { describeListeningContract } from '../../../test-support/listening-contract.js'
import { harness, PLATFORMS } from './helpers.js'

describe.each(PLATFORMS)('nest on $platform', (platform) => {
  describeListeningContract('on a listening server', harness(platform))
})
