// The Nest recipe: the Express mount on Nest's Express platform (`app.use`), the Fastify plugin
// on its Fastify platform (`register` on the instance), through the same contract.
import 'reflect-metadata'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Limiter } from '@limiter/core'
import { Module } from '@nestjs/common'
import { NestFactory } from '@nestjs/core'
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express'
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify'
import { expressInspector, fastifyInspector } from '../src/index.js'
import { describeInspectorContract } from './contract.js'

// A module without decorator syntax (this package's tsconfig has no experimentalDecorators).
class AppModule {}
Module({})(AppModule)

async function hit(limiter: Limiter, key: string): Promise<number> {
  return (await limiter.consume(key)).allowed ? 200 : 429
}

function urlOf(app: NestExpressApplication | NestFastifyApplication): string {
  const { port } = (app.getHttpServer() as Server).address() as AddressInfo
  return `http://127.0.0.1:${port}`
}

describeInspectorContract('nest-express', async (page, limiter, prefix) => {
  const app = await NestFactory.create<NestExpressApplication>(AppModule, new ExpressAdapter(), {
    logger: false,
  })
  const express = app.getHttpAdapter().getInstance()
  express.get('/hit', async (req, res) => {
    res.status(await hit(limiter, String(req.query.key))).end()
  })
  app.use(prefix || '/', expressInspector(page))
  await app.listen(0, '127.0.0.1')
  return { url: urlOf(app), close: () => app.close() }
})

describeInspectorContract('nest-fastify', async (page, limiter, prefix) => {
  const app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter(), {
    logger: false,
  })
  const fastify = app.getHttpAdapter().getInstance()
  fastify.get('/hit', async (request, reply) => {
    const { key } = request.query as { key: string }
    return reply.code(await hit(limiter, key)).send('')
  })
  await fastify.register(fastifyInspector(page), { prefix })
  await app.listen(0, '127.0.0.1')
  return { url: urlOf(app), close: () => app.close() }
})
