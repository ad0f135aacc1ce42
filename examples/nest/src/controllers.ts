// The routes: a global limit, a login limit per email address, a search burst limit, and a
// health route the guard skips.
import { ipKey, RateLimit, SkipRateLimit, userKey } from '@limiter/nest'
import {
  BadRequestException,
  Body,
  Controller,
  Get,
  Post,
  Req,
  UnauthorizedException,
} from '@nestjs/common'
import type { Request } from 'express'

@Controller()
export class HomeController {
  @Get()
  home(@Req() req: Request & { rateLimit?: { remaining: number } }) {
    return { hello: 'world', remaining: req.rateLimit?.remaining }
  }

  // Load balancers may poll freely.
  @Get('health')
  @SkipRateLimit()
  health() {
    return { ok: true }
  }
}

@Controller()
export class AuthController {
  // 5 attempts per 15 minutes per email address, exact over any 15 minutes (sliding-log). Nest
  // parses the body before guards run, so the key can read it; without an email, the client IP.
  @Post('login')
  @RateLimit({
    limit: 5,
    window: '15m',
    algorithm: 'sliding-log',
    key: (req: Request) => {
      const email = (req.body as { email?: unknown } | undefined)?.email
      return typeof email === 'string' && email.trim() !== ''
        ? userKey(email.trim().toLowerCase())
        : ipKey(req.ip)
    },
  })
  login(@Body() body: { email?: string }) {
    if (typeof body?.email !== 'string') throw new BadRequestException('send an "email"')
    // Every password is wrong in this example.
    throw new UnauthorizedException('wrong password')
  }
}

@Controller('search')
@RateLimit({ limit: 10, window: '1s', algorithm: 'token-bucket', burst: 20 })
export class SearchController {
  // 10 per second with bursts of 20, per client IP; the other handlers of this class would
  // each count on their own.
  @Get()
  search() {
    return { results: [] }
  }
}
