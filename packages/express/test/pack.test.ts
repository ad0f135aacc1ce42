// The packed tarballs (@limiter/core + @limiter/express) work from a scratch directory outside the
// repo, as ESM and as CJS, with Express linked in as the user's own peer.
import {
  describePackedAdapter,
  listeningExpected,
  listeningScript,
} from '../../../test-support/packed-adapter.js'

const setup = `const app = express()
app.use(rateLimit({ limit: 1, window: '1m' }))
app.get('/', (req, res) => {
  res.json({ remaining: req.rateLimit.remaining, key: ipKey(req.ip) })
})`

describePackedAdapter({
  name: '@limiter/express',
  dir: 'packages/express',
  peer: 'express',
  esm: listeningScript(
    "import express from 'express'\nimport { ipKey, rateLimit } from '@limiter/express'",
    setup,
  ),
  cjs: `(async () => {${listeningScript("const express = require('express')\nconst { ipKey, rateLimit } = require('@limiter/express')", setup)}})()`,
  expected: listeningExpected({ remaining: 0, key: '127.0.0.1' }),
})
