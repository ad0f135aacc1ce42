// The packed tarball works from a scratch directory outside the repo, as ESM and as CJS: a Nest
// app (Express platform, decorators applied by hand in plain JavaScript) with the module, the
// global guard and @RateLimit answers real requests.
import { describePackedAdapter } from '../../../test-support/packed-adapter.js'

const body = `
class Home {
  get() { return 'ok' }
  free() { return 'free' }
}
Controller()(Home)
const method = (name, path, ...decorators) => {
  const descriptor = Object.getOwnPropertyDescriptor(Home.prototype, name)
  for (const d of [Get(path), ...decorators]) d(Home.prototype, name, descriptor)
}
method('get', '/', RateLimit({ limit: 1 }))
method('free', '/free')
class AppModule {}
Module({
  imports: [LimiterModule.forRoot({ window: '1m' })],
  controllers: [Home],
  providers: [{ provide: APP_GUARD, useClass: LimiterGuard }],
})(AppModule)
const app = await NestFactory.create(AppModule, { logger: false })
await app.listen(0, '127.0.0.1')
const url = 'http://127.0.0.1:' + app.getHttpServer().address().port
const first = await fetch(url + '/')
const second = await fetch(url + '/')
const free = await fetch(url + '/free')
await app.close()
console.log(JSON.stringify([first.status, first.headers.get('ratelimit-policy'), second.status,
  second.headers.get('content-type'), (await second.json()).status, free.status, typeof ipKey]))
`

const imports = (load: (name: string) => string) => `
${load('reflect-metadata')}
const { Controller, Get, Module } = ${load('@nestjs/common')}
const { APP_GUARD, NestFactory } = ${load('@nestjs/core')}
const { LimiterGuard, LimiterModule, RateLimit, ipKey } = ${load('@limiter/nest')}
`

describePackedAdapter({
  name: '@limiter/nest',
  dir: 'packages/nest',
  peer: '@nestjs/core',
  peers: ['@nestjs/common', '@nestjs/platform-express', 'reflect-metadata', 'rxjs'],
  esm: `${imports((name) => `await import('${name}')`)}\n${body}`,
  cjs: `;(async () => {${imports((name) => `require('${name}')`)}\n${body}})()`,
  expected: [
    200,
    '"gc1/1m";q=1;w=60',
    429,
    'application/problem+json; charset=utf-8',
    429,
    200,
    'function',
  ],
})
