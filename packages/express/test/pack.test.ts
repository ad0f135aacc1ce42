// The packed tarballs (@limiter/core + @limiter/express) work from a scratch directory outside the
// repo, as ESM and as CJS, with Express linked in as the user's own peer.
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { packAndInstall, type Scratch } from '../../../test-support/pack.js'

let scratch: Scratch

beforeAll(async () => {
  scratch = await packAndInstall(
    ['packages/core', 'packages/express'],
    ['express'],
    'packages/express',
  )
}, 180_000)
afterAll(() => scratch?.remove())

const body = (load: string) => `
${load}
const app = express()
app.use(rateLimit({ limit: 1, window: '1m' }))
app.get('/', (req, res) => {
  res.json({ remaining: req.rateLimit.remaining, key: ipKey(req.ip) })
})
const server = app.listen(0, '127.0.0.1')
await new Promise((resolve) => server.once('listening', resolve))
const url = 'http://127.0.0.1:' + server.address().port + '/'
const ok = await fetch(url)
const limited = await fetch(url)
server.close()
console.log(JSON.stringify({
  statuses: [ok.status, limited.status],
  body: await ok.json(),
  policy: ok.headers.get('ratelimit-policy'),
  type: limited.headers.get('content-type'),
}))
`

const expected = {
  statuses: [200, 429],
  body: { remaining: 0, key: '127.0.0.1' },
  policy: '"sw1.60000";q=1;w=60',
  type: expect.stringMatching(/^application\/problem\+json/),
}

describe('packed @limiter/express', () => {
  it('imports as ESM and answers requests', async () => {
    const out = await scratch.run(
      'esm.mjs',
      body("import express from 'express'\nimport { ipKey, rateLimit } from '@limiter/express'"),
    )
    expect(JSON.parse(out)).toEqual(expected)
  })

  it('requires as CJS and answers requests', async () => {
    const cjs = `(async () => {${body("const express = require('express')\nconst { ipKey, rateLimit } = require('@limiter/express')")}})()`
    const out = await scratch.run('cjs.cjs', cjs)
    expect(JSON.parse(out)).toEqual(expected)
  })

  it('ships only dist and package metadata', () => {
    const files = readdirSync(join(scratch.dir, 'node_modules', '@limiter', 'express')).sort()
    expect(
      files.filter(
        (f) => !['dist', 'package.json', 'README.md', 'CHANGELOG.md', 'LICENSE'].includes(f),
      ),
    ).toEqual([])
  })
})
