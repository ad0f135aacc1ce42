// The host request reaches `authorize` typed as the framework's own, and the mounts take it.
import { createLimiter } from '@limiter/core'
import express, { type Request } from 'express'
import Fastify, { type FastifyRequest } from 'fastify'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { expressInspector, fastifyInspector, inspector } from '../src/index.js'

type WithUser = Request & { user?: { admin: boolean } }

describe('types', () => {
  it('types authorize by the host request, and mounts that inspector', async () => {
    const limiter = createLimiter({ name: 'typed', limit: 1, window: '1m' })
    const page = inspector<WithUser>({
      limiters: [limiter],
      authorize: (_request, req) => {
        expectTypeOf(req).toEqualTypeOf<WithUser>()
        return req.user?.admin
      },
    })
    express().use('/ops', expressInspector(page))
    const fastifyPage = inspector<FastifyRequest>({
      limiters: [limiter],
      authorize: (_r, req) => req.ip === '127.0.0.1',
    })
    const app = Fastify()
    await app.register(fastifyInspector(fastifyPage), { prefix: '/ops' })
    await app.close()
    expect(typeof page.handle).toBe('function')
    page.close()
    fastifyPage.close()
  })
})
