// The packed tarballs (@limiter/core + @limiter/koa) work from a scratch directory outside the
// repo, as ESM and as CJS, with Koa linked in as the user's own peer.
import {
  describePackedAdapter,
  listeningExpected,
  listeningScript,
} from '../../../test-support/packed-adapter.js'

const setup = `const app = new Koa()
app.use(rateLimit({ limit: 1, window: '1m' }))
app.use((ctx) => {
  ctx.body = { remaining: ctx.state.rateLimit.remaining, key: ipKey(ctx.ip) }
})`

describePackedAdapter({
  name: '@limiter/koa',
  dir: 'packages/koa',
  peer: 'koa',
  esm: listeningScript(
    "import Koa from 'koa'\nimport { ipKey, rateLimit } from '@limiter/koa'",
    setup,
  ),
  cjs: `(async () => {${listeningScript("const Koa = require('koa')\nconst { ipKey, rateLimit } = require('@limiter/koa')", setup)}})()`,
  expected: listeningExpected({ remaining: 0, key: '127.0.0.1' }),
})
