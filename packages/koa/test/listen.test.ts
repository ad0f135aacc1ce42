// rateLimit() on a real listening Koa 2 and 3 server, with real fetch and a client that aborts
// early: the shared contract.
import { describe } from 'vitest'
import { describeListeningContract } from '../../../test-support/listening-contract.js'
import { harness, KOA } from './helpers.js'

describe.each(KOA)('$version', ({ Koa }) => {
  describeListeningContract('on a listening server', harness(Koa))
})
