// The app: LimiterModule sets the defaults (and a global limit), the guard runs for every route.
import { LimiterGuard, LimiterModule } from '@limiter/nest'
import { Module } from '@nestjs/common'
import { APP_GUARD } from '@nestjs/core'
import { Redis } from 'ioredis'
import { AuthController, HomeController, SearchController } from './controllers.js'

const redis = process.env.REDIS_URL ? new Redis(process.env.REDIS_URL) : undefined

@Module({
  imports: [
    LimiterModule.forRoot({
      // Every route without @RateLimit: 100 requests per minute per client IP, counted together.
      limit: 100,
      window: '1m',
      // Without `redis`, counters live in one in-process MemoryStore.
      ...(redis === undefined ? {} : { redis }),
      prefix: 'example-nest:',
    }),
  ],
  controllers: [HomeController, AuthController, SearchController],
  providers: [{ provide: APP_GUARD, useClass: LimiterGuard }],
})
export class AppModule {}
