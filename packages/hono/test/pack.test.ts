// The packed tarballs (@limiter/core + @limiter/hono) work from a scratch directory outside the
// repo, as ESM and as CJS, with Hono and @hono/node-server linked in as the user's own.
import {
  describePackedAdapter,
  listeningExpected,
  listeningScript,
} from '../../../test-support/packed-adapter.js'

const setup = `const hono = new Hono()
hono.use(rateLimit({ limit: 1, window: '1m' }))
hono.get('/', (c) => c.json({ remaining: c.get('rateLimit').remaining, key: ipKey(getConnInfo(c).remote.address) }))
const app = { listen: (port, hostname) => serve({ fetch: hono.fetch, port, hostname }) }`

describePackedAdapter({
  name: '@limiter/hono',
  dir: 'packages/hono',
  peer: 'hono',
  peers: ['@hono/node-server'],
  esm: listeningScript(
    "import { Hono } from 'hono'\nimport { serve } from '@hono/node-server'\nimport { getConnInfo } from '@hono/node-server/conninfo'\nimport { ipKey, rateLimit } from '@limiter/hono'",
    setup,
  ),
  cjs: `(async () => {${listeningScript("const { Hono } = require('hono')\nconst { serve } = require('@hono/node-server')\nconst { getConnInfo } = require('@hono/node-server/conninfo')\nconst { ipKey, rateLimit } = require('@limiter/hono')", setup)}})()`,
  expected: listeningExpected({ remaining: 0, key: '127.0.0.1' }),
})
