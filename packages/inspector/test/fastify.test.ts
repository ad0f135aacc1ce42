import fastify5 from 'fastify'
import fastify4 from 'fastify4'
import { fastifyInspector } from '../src/index.js'
import { describeInspectorContract } from './contract.js'

for (const [name, Fastify] of [
  ['fastify4', fastify4],
  ['fastify5', fastify5],
] as const) {
  describeInspectorContract(name, async (page, limiter, prefix) => {
    const app = Fastify()
    app.get('/hit', async (request, reply) => {
      const { key } = request.query as { key: string }
      const decision = await limiter.consume(key)
      return reply.code(decision.allowed ? 200 : 429).send('')
    })
    await app.register(fastifyInspector(page), { prefix })
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    return { url, close: () => app.close() }
  })
}
