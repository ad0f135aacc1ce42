// The README's trust-proxy recipe, on every installed Fastify major: behind a proxy trusted by its
// address, two forwarded clients get separate budgets, and a forged leading X-Forwarded-For entry
// does not open a new one. (`trustProxy: 1`, the recipe before, gives request.ip = the proxy for
// every client on Fastify 5.)
import { describe, expect, it } from 'vitest'
import { rateLimit } from '../src/index.js'
import { FASTIFY } from './helpers.js'

describe.each(FASTIFY)('$version: trustProxy by the proxy address', ({ fastify }) => {
  it.each(['127.0.0.1', ['127.0.0.1/8', '::1/128']])('trustProxy %j', async (trustProxy) => {
    const app = fastify({ trustProxy })
    await app.register(rateLimit, { limit: 1, window: '1m' })
    app.get('/', async () => 'ok')
    // inject connects from 127.0.0.1: the proxy, here.
    const from = (xff: string) => app.inject({ url: '/', headers: { 'x-forwarded-for': xff } })
    expect((await from('203.0.113.1')).statusCode).toBe(200)
    expect((await from('203.0.113.2')).statusCode).toBe(200)
    expect((await from('203.0.113.1')).statusCode).toBe(429)
    // A client that forges an entry before its own address is still its own address.
    expect((await from('198.51.100.7, 203.0.113.2')).statusCode).toBe(429)
    await app.close()
  })
})
