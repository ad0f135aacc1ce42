// The packed tarball works from a scratch directory outside the repo, as ESM and as CJS: the
// plugin registers on the user's Fastify and answers through inject.
import { describePackedAdapter } from '../../../test-support/packed-adapter.js'

const body = `
const app = Fastify()
await app.register(rateLimit, { limit: 1, window: '1m' })
app.get('/', async () => 'ok')
app.get('/x', { preHandler: app.rateLimit({ limit: 5, window: '1m' }) }, async () => 'x')
const first = await app.inject('/')
const second = await app.inject('/')
const x = await app.inject('/x')
await app.close()
console.log(JSON.stringify([first.statusCode, first.headers['ratelimit-policy'], second.statusCode, x.statusCode, typeof ipKey]))
`

describePackedAdapter({
  name: '@limiter/fastify',
  dir: 'packages/fastify',
  // fastify is a peer: linked from this package's dev install, as a user's own would be.
  peer: 'fastify',
  esm: `import Fastify from 'fastify'\nimport rateLimit, { ipKey } from '@limiter/fastify'\n${body}`,
  cjs: `const Fastify = require('fastify')\nconst { rateLimit, ipKey } = require('@limiter/fastify')\nif (require('@limiter/fastify').default !== rateLimit) throw new Error('default export')\n;(async () => {${body}})()`,
  expected: [200, '"gc1/1m";q=1;w=60', 429, 429, 'function'],
})
