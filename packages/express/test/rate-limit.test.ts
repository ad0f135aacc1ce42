// rateLimit() with the embedded MemoryStore, through supertest, on Express 4 and 5: the shared
// adapter contract (headers, limited responses, options), then what is Express's own.

import { createLimiter, MemoryStore } from '@limiter/core'
import request from 'supertest'
import { describe, expect, it } from 'vitest'
import {
  describeMemoryContracts,
  expectOnLimitedAnswer,
} from '../../../test-support/shared-contracts.js'
import { rateLimit } from '../src/index.js'
import { EXPRESS, harness, appWith as makeApp } from './helpers.js'

describe.each(EXPRESS)('$version', ({ express }) => {
  describeMemoryContracts(harness(express), { store: () => new MemoryStore(), createLimiter })

  it('several limiters on one route append one list member each', async () => {
    const app = express()
    app.use(rateLimit({ limit: 10, window: '1m' }))
    app.get('/a', rateLimit({ limit: 2, window: '1s', name: 'burst' }), (_req, res) => {
      res.send('a')
    })
    const res = await request(app).get('/a')
    expect(res.headers['ratelimit-policy']).toBe('"gc10/1m";q=10;w=60, "burst";q=2;w=1')
    expect(res.headers.ratelimit).toMatch(/^"gc10\/1m";r=9;t=\d+, "burst";r=1;t=\d+$/)
  })

  it('onLimited(req, res, next, decision) takes over the response, with the headers already set', async () => {
    const app = makeApp(express, {
      limit: 1,
      window: '1m',
      onLimited: (_req, res, _next, decision) => {
        res
          .status(418)
          .json({ retryAfterMs: decision.retryAfterMs, retryAfter: res.getHeader('Retry-After') })
      },
    })
    await expectOnLimitedAnswer(() => request(app).get('/'))
  })
})
