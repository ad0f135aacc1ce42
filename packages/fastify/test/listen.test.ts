// The plugin on a real listening Fastify 4 and 5 server, with real fetch and a client that aborts
// early: the shared contract.
import { describe } from 'vitest'
import { describeListeningContract } from '../../../test-support/listening-contract.js'
import { FASTIFY, harness } from './helpers.js'

describe.each(FASTIFY)('$version', ({ fastify }) => {
  describeListeningContract('on a listening server', harness(fastify))
})
