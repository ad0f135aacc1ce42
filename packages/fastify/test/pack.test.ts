// The packed tarball works from a scratch directory outside the repo, as ESM and as CJS: the
// plugin registers on the user's Fastify and answers through inject.
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { packAndInstall, type Scratch } from '../../../test-support/pack.js'

let scratch: Scratch

beforeAll(async () => {
  // fastify is a peer: linked from this package's dev install, as a user's own would be.
  scratch = await packAndInstall(
    ['packages/core', 'packages/fastify'],
    ['fastify'],
    'packages/fastify',
  )
}, 180_000)
afterAll(() => scratch?.remove())

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
const expected = [200, '"sw1.60000";q=1;w=60', 429, 429, 'function']

describe('packed @limiter/fastify', () => {
  it('imports as ESM', async () => {
    const esm = `import Fastify from 'fastify'\nimport rateLimit, { ipKey } from '@limiter/fastify'\n${body}`
    expect(JSON.parse(await scratch.run('esm.mjs', esm))).toEqual(expected)
  })

  it('requires as CJS', async () => {
    const cjs = `const Fastify = require('fastify')\nconst { rateLimit, ipKey } = require('@limiter/fastify')\nif (require('@limiter/fastify').default !== rateLimit) throw new Error('default export')\n;(async () => {${body}})()`
    expect(JSON.parse(await scratch.run('cjs.cjs', cjs))).toEqual(expected)
  })

  it('ships only dist and package metadata', () => {
    const files = readdirSync(join(scratch.dir, 'node_modules', '@limiter', 'fastify')).sort()
    expect(
      files.filter(
        (f) => !['dist', 'package.json', 'README.md', 'CHANGELOG.md', 'LICENSE'].includes(f),
      ),
    ).toEqual([])
  })
})
