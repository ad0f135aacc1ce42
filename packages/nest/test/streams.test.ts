// A StreamableFile whose client leaves mid-stream, on a real listening server of each platform.
// Nest's ExpressAdapter then destroys the file's source and ends nothing (no res.end, no
// res.destroy): the request is over all the same, so its concurrency lease comes back (before:
// held until the lease's window, 429 for every later request).
import 'reflect-metadata'
import type { AddressInfo } from 'node:net'
import { connect } from 'node:net'
import { Readable } from 'node:stream'
import { Controller, Get, type INestApplication, StreamableFile } from '@nestjs/common'
import { APP_GUARD } from '@nestjs/core'
import { Test } from '@nestjs/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { LimiterGuard, LimiterModule } from '../src/index.js'
import { PLATFORMS } from './helpers.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

@Controller()
class Files {
  @Get('file')
  file(): StreamableFile {
    // one chunk, then nothing more until the client leaves
    const source = new Readable({ read() {} })
    source.push('first chunk')
    return new StreamableFile(source)
  }
}

const apps: INestApplication[] = []
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close()
})

async function listening(platform: (typeof PLATFORMS)[number]): Promise<number> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      LimiterModule.forRoot({ algorithm: 'concurrency', limit: 1, window: '1m', name: 'files' }),
    ],
    controllers: [Files],
    providers: [{ provide: APP_GUARD, useClass: LimiterGuard }],
  }).compile()
  const app = moduleRef.createNestApplication(platform.adapter(), { logger: false })
  apps.push(app)
  await app.listen(0, '127.0.0.1')
  return (app.getHttpServer().address() as AddressInfo).port
}

// The status line of a GET to /file on a connection of its own; with `leave`, the connection is
// destroyed as soon as the first bytes arrive.
async function get(port: number, leave: boolean): Promise<string> {
  const socket = connect(port, '127.0.0.1')
  await new Promise((resolve) => socket.once('connect', resolve))
  socket.write('GET /file HTTP/1.1\r\nHost: x\r\n\r\n')
  const first = await new Promise<string>((resolve) =>
    socket.once('data', (chunk) => resolve(String(chunk))),
  )
  socket.destroy()
  if (leave) await sleep(0)
  return first.slice(0, first.indexOf('\r\n'))
}

describe.each(PLATFORMS)('nest on $platform', (platform) => {
  it('a client that leaves a StreamableFile mid-stream gives its lease back', async () => {
    const port = await listening(platform)
    expect(await get(port, true)).toBe('HTTP/1.1 200 OK')
    // the lease comes back once Nest has taken the file off the response (polled: no time bound)
    let status = ''
    for (let i = 0; i < 200 && status !== 'HTTP/1.1 200 OK'; i++) {
      await sleep(10)
      status = await get(port, true)
    }
    expect(status).toBe('HTTP/1.1 200 OK')
  })
})
