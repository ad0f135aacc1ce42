// rateLimit() on a real listening Express 4 and 5 server, with real fetch and a client that
// aborts early: the shared contract.
import { describe } from 'vitest'
import { describeListeningContract } from '../../../test-support/listening-contract.js'
import { EXPRESS, harness } from './helpers.js'

describe.each(EXPRESS)('$version', ({ express }) => {
  describeListeningContract('on a listening server', harness(express))
})
