// Regression: `@SkipRateLimit({ default: true })`, a literal port of @nestjs/throttler's
// `@SkipThrottle({ default: true })`, was stored as an object and skipped nothing.
import { Controller, Get, type Type } from '@nestjs/common'
import { describe, expect, it } from 'vitest'
import { RateLimit, SkipRateLimit } from '../src/index.js'
import { nestApp, PLATFORMS, type Platform, sender } from './helpers.js'

@Controller('handler')
class HandlerSkips {
  @Get('skipped')
  @SkipRateLimit({ default: true })
  skipped() {
    return 'skipped'
  }
}

@Controller('class')
@SkipRateLimit({ default: true })
class ClassSkips {
  @Get('skipped')
  skipped() {
    return 'skipped'
  }

  @Get('limited')
  @SkipRateLimit({ default: false })
  @RateLimit({ limit: 1, window: '1m' })
  limited() {
    return 'limited'
  }
}

const CONTROLLERS: Type<unknown>[] = [HandlerSkips, ClassSkips]

describe.each(PLATFORMS)("@nestjs/throttler's skip shape on $platform", (platform: Platform) => {
  it('{ default: true } skips as @SkipRateLimit() does; { default: false } limits again', async () => {
    const app = await nestApp(platform, { limit: 1, window: '1m' }, CONTROLLERS)
    const send = sender(platform, app)
    const statuses: number[] = []
    for (const path of ['/handler/skipped', '/handler/skipped', '/class/skipped', '/class/skipped'])
      statuses.push((await send(path)).status)
    expect(statuses).toEqual([200, 200, 200, 200])
    expect((await send('/class/limited')).status).toBe(200)
    expect((await send('/class/limited')).status).toBe(429)
    await app.close()
  })
})

describe('what @SkipRateLimit cannot honour throws at decoration time', () => {
  it("another throttler's name: one policy of a limiter cannot be skipped alone", () => {
    expect(() => SkipRateLimit({ short: true } as never)).toThrow(
      /^Invalid `@SkipRateLimit\(\{ short \}\)`: names a throttler, but a handler here has one limiter.*write @SkipRateLimit\(\) to skip the handler's limiter/,
    )
    expect(() => SkipRateLimit({ default: true, long: false } as never)).toThrow(RangeError)
  })

  it('anything but a boolean or { default: boolean }', () => {
    expect(() => SkipRateLimit('yes' as never)).toThrow(
      'Invalid `@SkipRateLimit`: expected true, false, or @nestjs/throttler\'s { default: true }, got "yes".',
    )
    expect(() => SkipRateLimit({} as never)).toThrow(
      'Invalid `@SkipRateLimit({ default })`: expected true or false, got undefined.',
    )
    expect(() => SkipRateLimit({ default: 1 } as never)).toThrow(TypeError)
  })
})
