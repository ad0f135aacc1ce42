// What each HTTP server variant installs in front of one `GET /` route, per framework.
import { loadAdapter } from './our-adapters.mjs'

/** Thrown when a variant cannot run (an adapter not built yet); the runner reports the reason. */
export class Skip extends Error {}

async function ours(framework, { limit, windowMs, algorithm, redis }) {
  const loaded = await loadAdapter(framework)
  if (loaded.missing) throw new Skip(loaded.missing)
  const options = { limit, window: windowMs }
  if (algorithm) options.algorithm = algorithm
  if (redis) options.redis = redis
  if (framework === 'fastify')
    return { plugin: loaded.module.default ?? loaded.module.rateLimit, options }
  return loaded.module.rateLimit(options)
}

// Nest on Express: what goes into the app module (`imports`, `providers`) in front of `GET /`.
async function oursNest({ limit, windowMs, algorithm, redis }) {
  const loaded = await loadAdapter('nest')
  if (loaded.missing) throw new Skip(loaded.missing)
  const { LimiterGuard, LimiterModule } = loaded.module
  const { APP_GUARD } = await import('@nestjs/core')
  const options = { limit, window: windowMs }
  if (algorithm) options.algorithm = algorithm
  if (redis) options.redis = redis
  return {
    imports: [LimiterModule.forRoot(options)],
    providers: [{ provide: APP_GUARD, useClass: LimiterGuard }],
  }
}

async function nestThrottler(store, { limit, windowMs, redis }) {
  const { ThrottlerGuard, ThrottlerModule } = await import('@nestjs/throttler')
  const { APP_GUARD } = await import('@nestjs/core')
  const options = { throttlers: [{ ttl: windowMs, limit }] }
  if (store === 'redis') {
    const { ThrottlerStorageRedisService } = await import('@nest-lab/throttler-storage-redis')
    options.storage = new ThrottlerStorageRedisService(redis)
  }
  return {
    imports: [ThrottlerModule.forRoot(options)],
    providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
  }
}

async function rlfMiddleware(store, { limit, windowMs, redis }) {
  const { RateLimiterMemory, RateLimiterRedis } = await import('rate-limiter-flexible')
  const points = limit
  const duration = windowMs / 1000
  const limiter =
    store === 'redis'
      ? new RateLimiterRedis({ storeClient: redis, points, duration })
      : new RateLimiterMemory({ points, duration })
  // The middleware from rate-limiter-flexible's own Express guide.
  return (req, res, next) => {
    limiter.consume(req.ip).then(
      () => next(),
      (reason) =>
        reason instanceof Error ? next(reason) : res.status(429).send('Too Many Requests'),
    )
  }
}

async function erlMiddleware(store, { limit, windowMs, redis }) {
  const { rateLimit } = await import('express-rate-limit')
  const options = { windowMs, limit }
  if (store === 'redis') {
    const { RedisStore } = await import('rate-limit-redis')
    options.store = new RedisStore({
      sendCommand: (command, ...args) => redis.call(command, ...args),
    })
  }
  return rateLimit(options)
}

async function koaMiddleware(store, { limit, windowMs, redis }) {
  const { default: ratelimit } = await import('koa-ratelimit')
  return store === 'redis'
    ? ratelimit({ driver: 'redis', db: redis, duration: windowMs, max: limit })
    : ratelimit({ driver: 'memory', db: new Map(), duration: windowMs, max: limit })
}

async function fastifyPlugin(store, { limit, windowMs, redis }) {
  const { default: plugin } = await import('@fastify/rate-limit')
  const options = { max: limit, timeWindow: windowMs }
  if (store === 'redis') options.redis = redis
  return { plugin, options }
}

// hono-rate-limiter 0.5 on @hono/node-server, keyed by the socket's address as ours is. Its
// RedisStore takes an Upstash-style client (scriptLoad, evalsha, decr, del): ioredis behind four
// one-line methods.
async function honoRateLimiter(store, { limit, windowMs, redis }) {
  const { rateLimiter, RedisStore } = await import('hono-rate-limiter')
  const { getConnInfo } = await import('@hono/node-server/conninfo')
  const options = { windowMs, limit, keyGenerator: (c) => getConnInfo(c).remote.address ?? '' }
  if (store === 'redis') {
    options.store = new RedisStore({
      client: {
        scriptLoad: (script) => redis.script('LOAD', script),
        evalsha: (sha, keys, args) => redis.evalsha(sha, keys.length, ...keys, ...args),
        decr: (key) => redis.decr(key),
        del: (key) => redis.del(key),
      },
    })
  }
  return rateLimiter(options)
}

// The floor under any limiter that sends headers: read the client's IP and set two header fields
// the size of ours (draft-10 `RateLimit-Policy` and `RateLimit`, a number changing per request),
// limiting nothing. What a variant costs over it is the limiter's own work.
const POLICY = '"floor1000000000/1m";q=1000000000;w=60'
function floorFields(ip) {
  floorFields.left = (floorFields.left ?? 1e9) - 1
  return ip === '' ? '' : `"floor1000000000/1m";r=${floorFields.left};t=60`
}
const floor = {
  express: () => (req, res, next) => {
    res.setHeader('RateLimit-Policy', POLICY)
    res.setHeader('RateLimit', floorFields(req.ip))
    next()
  },
  koa: () => (ctx, next) => {
    ctx.res.setHeader('RateLimit-Policy', POLICY)
    ctx.res.setHeader('RateLimit', floorFields(ctx.ip))
    return next()
  },
  hono: async () => {
    const { getConnInfo } = await import('@hono/node-server/conninfo')
    return async (c, next) => {
      c.header('RateLimit-Policy', POLICY)
      c.header('RateLimit', floorFields(getConnInfo(c).remote.address ?? ''))
      await next()
    }
  },
  // a global guard that sets the fields: the floor under any limiter that is a Nest guard
  nest: async () => {
    const { APP_GUARD } = await import('@nestjs/core')
    const { Injectable } = await import('@nestjs/common')
    class FloorGuard {
      canActivate(context) {
        const http = context.switchToHttp()
        const res = http.getResponse()
        res.setHeader('RateLimit-Policy', POLICY)
        res.setHeader('RateLimit', floorFields(http.getRequest().ip))
        return true
      }
    }
    Injectable()(FloorGuard)
    return { imports: [], providers: [{ provide: APP_GUARD, useClass: FloorGuard }] }
  },
  fastify: () => {
    const plugin = (app, _options, done) => {
      app.addHook('onRequest', (request, reply, next) => {
        reply.header('RateLimit-Policy', POLICY)
        reply.header('RateLimit', floorFields(request.ip))
        next()
      })
      done()
    }
    // What fastify-plugin sets: the hook applies to the whole app, as a limiter's plugin does.
    plugin[Symbol.for('skip-override')] = true
    return { plugin, options: {} }
  },
}

/** Whether a variant limits requests: not the bare framework, not the floor (each runs once). */
export const limitsRequests = (variant) => variant !== 'bare' && variant !== 'reference/floor'

/**
 * Variant ids per framework, in table order. `ours/*` need our adapter; the rest are the
 * peers that fit that framework, each with its memory and Redis store.
 */
export const VARIANTS = {
  express: {
    bare: null,
    'reference/floor': floor.express,
    'ours/memory': (o) => ours('express', o),
    'ours/redis': (o) => ours('express', o),
    'express-rate-limit/memory': (o) => erlMiddleware('memory', o),
    'express-rate-limit/redis': (o) => erlMiddleware('redis', o),
    'rate-limiter-flexible/memory': (o) => rlfMiddleware('memory', o),
    'rate-limiter-flexible/redis': (o) => rlfMiddleware('redis', o),
  },
  koa: {
    bare: null,
    'reference/floor': floor.koa,
    'ours/memory': (o) => ours('koa', o),
    'ours/redis': (o) => ours('koa', o),
    'koa-ratelimit/memory': (o) => koaMiddleware('memory', o),
    'koa-ratelimit/redis': (o) => koaMiddleware('redis', o),
  },
  fastify: {
    bare: null,
    'reference/floor': floor.fastify,
    'ours/memory': (o) => ours('fastify', o),
    'ours/redis': (o) => ours('fastify', o),
    '@fastify/rate-limit/memory': (o) => fastifyPlugin('memory', o),
    '@fastify/rate-limit/redis': (o) => fastifyPlugin('redis', o),
  },
  // Hono 4 on @hono/node-server
  hono: {
    bare: null,
    'reference/floor': floor.hono,
    'ours/memory': (o) => ours('hono', o),
    'ours/redis': (o) => ours('hono', o),
    'hono-rate-limiter/memory': (o) => honoRateLimiter('memory', o),
    'hono-rate-limiter/redis': (o) => honoRateLimiter('redis', o),
  },
  // Nest 12 on its Express platform
  nest: {
    bare: null,
    'reference/floor': floor.nest,
    'ours/memory': (o) => oursNest(o),
    'ours/redis': (o) => oursNest(o),
    '@nestjs/throttler/memory': (o) => nestThrottler('memory', o),
    '@nestjs/throttler/redis': (o) => nestThrottler('redis', o),
  },
}
