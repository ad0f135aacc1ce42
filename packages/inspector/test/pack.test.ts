// The packed tarballs (@limiter/core + @limiter/inspector) work from a scratch directory outside
// the repo, as ESM and as CJS, mounted on Express linked in as the user's own.
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { packAndInstall, type Scratch } from '../../../test-support/pack.js'

const body = `
const limiter = createLimiter({ name: 'packed', limit: 1, window: '1m' })
const page = inspector({ limiters: [limiter], authorize: (request) => request.headers.get('x-user') === 'admin' || undefined })
const app = express()
app.use('/ops', expressInspector(page))
const server = app.listen(0, '127.0.0.1')
await new Promise((resolve) => server.once('listening', resolve))
const url = 'http://127.0.0.1:' + server.address().port + '/ops'
const html = await fetch(url + '/', { headers: { 'x-user': 'admin' } })
const anonymous = await fetch(url + '/api/state')
const state = await (await fetch(url + '/api/state', { headers: { 'x-user': 'admin' } })).json()
server.close()
page.close()
console.log(JSON.stringify({
  statuses: [html.status, anonymous.status],
  title: /<title>([^<]*)/.exec(await html.text())[1],
  policies: state.policies.map((p) => p.id),
}))
`
const expected = { statuses: [200, 401], title: 'Rate limits', policies: ['packed/packed'] }

let scratch: Scratch
beforeAll(async () => {
  scratch = await packAndInstall(
    ['packages/core', 'packages/inspector'],
    ['express'],
    'packages/inspector',
  )
}, 180_000)
afterAll(() => scratch?.remove())

describe('packed @limiter/inspector', () => {
  it('imports as ESM and serves the page', async () => {
    const esm = `import express from 'express'\nimport { createLimiter } from '@limiter/core'\nimport { expressInspector, inspector } from '@limiter/inspector'\n${body}`
    expect(JSON.parse(await scratch.run('esm.mjs', esm))).toEqual(expected)
  })

  it('requires as CJS and serves the page', async () => {
    const cjs = `const express = require('express')\nconst { createLimiter } = require('@limiter/core')\nconst { expressInspector, inspector } = require('@limiter/inspector')\n;(async () => {${body}})()`
    expect(JSON.parse(await scratch.run('cjs.cjs', cjs))).toEqual(expected)
  })

  it('ships only dist and package metadata', () => {
    const files = readdirSync(join(scratch.dir, 'node_modules', '@limiter', 'inspector'))
    expect(
      files.filter(
        (f) => !['dist', 'package.json', 'README.md', 'CHANGELOG.md', 'LICENSE'].includes(f),
      ),
    ).toEqual([])
  })
})
