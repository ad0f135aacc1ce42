// A small NestJS app (Express platform) behind @limiter/nest. MemoryStore by default; set
// REDIS_URL to share the counters with every other process on that Redis.
import 'reflect-metadata'
import { NestFactory } from '@nestjs/core'
import type { NestExpressApplication } from '@nestjs/platform-express'
import { AppModule } from './app.module.js'

const port = Number(process.env.PORT ?? 3000)
const app = await NestFactory.create<NestExpressApplication>(AppModule)
// Behind one proxy: req.ip (and so the default key) is the client's, from X-Forwarded-For.
app.set('trust proxy', 'loopback')
app.enableShutdownHooks()
await app.listen(port)
console.log(`@limiter/example-nest on http://localhost:${port}`)
