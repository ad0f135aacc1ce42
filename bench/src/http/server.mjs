// Child process: one HTTP server (framework + limiter variant) on a free port of 127.0.0.1.
// Prints one JSON line, {"port": n} or {"skip": "reason"}, and runs until SIGTERM.
import { Redis } from 'ioredis'
import { Skip, VARIANTS } from './variants.mjs'

const config = JSON.parse(process.argv[2])
const { framework, variant, limit, windowMs, algorithm, redisPort } = config

function listening(port) {
  process.stdout.write(`${JSON.stringify({ port })}\n`)
}

async function express(limiter) {
  const { default: createApp } = await import('express')
  const app = createApp()
  if (limiter) app.use(limiter)
  app.get('/', (_req, res) => {
    res.send('ok')
  })
  const server = app.listen(0, '127.0.0.1', () => listening(server.address().port))
}

async function koa(limiter) {
  const { default: Koa } = await import('koa')
  const app = new Koa()
  if (limiter) app.use(limiter)
  app.use((ctx) => {
    ctx.body = 'ok'
  })
  const server = app.listen(0, '127.0.0.1', () => listening(server.address().port))
}

async function fastify(limiter) {
  const { default: Fastify } = await import('fastify')
  const app = Fastify({ logger: false })
  if (limiter) await app.register(limiter.plugin, limiter.options)
  app.get('/', async () => 'ok')
  await app.listen({ port: 0, host: '127.0.0.1' })
  listening(app.server.address().port)
}

async function hono(limiter) {
  const { Hono } = await import('hono')
  const { serve } = await import('@hono/node-server')
  const app = new Hono()
  if (limiter) app.use(limiter)
  app.get('/', (c) => c.text('ok'))
  serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => listening(info.port))
}

// Nest on its Express platform; the controller's decorators applied by hand (plain JavaScript).
async function nest(limiter) {
  await import('reflect-metadata')
  const { Controller, Get, Module } = await import('@nestjs/common')
  const { NestFactory } = await import('@nestjs/core')
  class Home {
    get() {
      return 'ok'
    }
  }
  Controller()(Home)
  Get('/')(Home.prototype, 'get', Object.getOwnPropertyDescriptor(Home.prototype, 'get'))
  class AppModule {}
  Module({
    imports: limiter?.imports ?? [],
    controllers: [Home],
    providers: limiter?.providers ?? [],
  })(AppModule)
  const app = await NestFactory.create(AppModule, { logger: false })
  await app.listen(0, '127.0.0.1')
  listening(app.getHttpServer().address().port)
}

const SERVERS = { express, koa, fastify, hono, nest }

async function main() {
  const make = VARIANTS[framework][variant]
  let limiter = null
  if (make) {
    const redis = variant.endsWith('/redis')
      ? new Redis({ host: '127.0.0.1', port: redisPort })
      : undefined
    limiter = await make({ limit, windowMs, algorithm, redis })
  }
  await SERVERS[framework](limiter)
}

process.on('SIGTERM', () => process.exit(0))
// The runner asks for this process's CPU time (user + system, µs) around a measured load.
process.on('message', (message) => {
  if (message === 'cpu') {
    const { user, system } = process.cpuUsage()
    process.send?.({ cpuUs: user + system })
  }
})
main().catch((error) => {
  if (error instanceof Skip) {
    process.stdout.write(`${JSON.stringify({ skip: error.message })}\n`)
    process.exit(0)
  }
  process.stdout.write(`${JSON.stringify({ skip: `server failed: ${error?.stack ?? error}` })}\n`)
  process.exit(1)
})
