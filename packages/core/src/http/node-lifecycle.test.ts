// When a request is over on a real Node http server: keep-alive, pipelining, a client gone.
import { EventEmitter } from 'node:events'
import { Agent, createServer, type IncomingMessage, request, type ServerResponse } from 'node:http'
import { type AddressInfo, connect } from 'node:net'
import { PassThrough } from 'node:stream'
import { afterEach, describe, expect, it } from 'vitest'
import { handlerDone, settleWhenOver, untilHandlerDone } from './node-lifecycle.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 2000
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await sleep(5)
  }
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void
let close: (() => Promise<void>) | undefined
afterEach(async () => {
  await close?.()
  close = undefined
})

async function serve(handler: Handler): Promise<number> {
  const server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  close = () => {
    server.closeAllConnections()
    return new Promise((resolve) => server.close(() => resolve()))
  }
  return (server.address() as AddressInfo).port
}

function get(port: number, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    request({ port, host: '127.0.0.1', agent }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
      .on('error', reject)
      .end()
  })
}

// Writes `count` pipelined GETs on one connection, destroying it after `ms`.
async function pipeline(port: number, count: number, ms: number): Promise<void> {
  const socket = connect(port, '127.0.0.1')
  await new Promise((resolve) => socket.once('connect', resolve))
  socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(count))
  await sleep(ms)
  socket.destroy()
}

describe('settleWhenOver on a real server', () => {
  it('a keep-alive connection serving many requests gathers no listeners', async () => {
    const settled: Array<number | undefined> = []
    const listeners: number[] = []
    const port = await serve((req, res) => {
      settleWhenOver(res, (status) => settled.push(status), true)
      listeners.push(req.socket.listenerCount('close'))
      res.end('ok')
    })
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    try {
      for (let i = 0; i < 20; i++) expect(await get(port, agent)).toBe(200)
    } finally {
      agent.destroy()
    }
    await until(() => settled.length === 20)
    expect(settled).toEqual(Array(20).fill(200))
    expect(new Set(listeners).size).toBe(1)
  })

  it('30 pipelined requests on one connection share one close listener', async () => {
    const settled: Array<number | undefined> = []
    const listeners: number[] = []
    let n = 0
    const port = await serve((req, res) => {
      settleWhenOver(res, (status) => settled.push(status), true)
      listeners.push(req.socket.listenerCount('close'))
      setTimeout(() => res.end('ok'), n++ === 0 ? 50 : 0)
    })
    const socket = connect(port, '127.0.0.1')
    await new Promise((resolve) => socket.once('connect', resolve))
    socket.resume()
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(30))
    try {
      await until(() => settled.length === 30)
    } finally {
      socket.destroy()
    }
    expect(settled).toEqual(Array(30).fill(200))
    expect(Math.max(...listeners) - Math.min(...listeners)).toBeLessThanOrEqual(1)
  })

  it.each([
    ['ended before the connection died', 0],
    ['ended after the connection died', 80],
  ])(
    'pipelined responses on a destroyed connection settle once, as aborted: %s',
    async (_name, late) => {
      const settled: Array<number | undefined> = []
      let n = 0
      const port = await serve((_req, res) => {
        settleWhenOver(res, (status) => settled.push(status), true)
        // the first answers after 150 ms: the others wait behind it
        setTimeout(() => res.end('ok'), n++ === 0 ? 150 : late)
      })
      await pipeline(port, 4, 30)
      await until(() => settled.length === 4)
      await sleep(200)
      expect(settled).toEqual([undefined, undefined, undefined, undefined])
    },
  )

  it('holds a gone client until the handler ends; without hold, settles as it leaves', async () => {
    const settled: Record<string, Array<number | undefined>> = { hold: [], leave: [] }
    let ended = false
    const port = await serve((req, res) => {
      const hold = req.url === '/hold'
      settleWhenOver(res, (status) => settled[hold ? 'hold' : 'leave']?.push(status), hold)
      setTimeout(() => {
        ended = true
        res.end('late')
      }, 150)
    })
    for (const path of ['/hold', '/leave']) {
      const socket = connect(port, '127.0.0.1')
      await new Promise((resolve) => socket.once('connect', resolve))
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`)
      await sleep(30)
      socket.destroy()
    }
    await until(() => settled.leave?.length === 1)
    expect(settled.hold).toEqual([])
    expect(ended).toBe(false)
    await until(() => settled.hold?.length === 1)
    expect(settled).toEqual({ hold: [undefined], leave: [undefined] })
  })
})

describe('a handler that destroys its response', () => {
  it.each([
    ['calls res.destroy()', 'destroy'],
    ['pipes a stream its client leaves', 'pipeline'],
    // Nest's ExpressAdapter for a StreamableFile: a response closed early destroys its source
    // only; the response is unpiped, never ended nor destroyed (before: held until the window)
    ['pipes a stream it destroys as its client leaves', 'unpipe'],
  ])('%s: the request is over (before: held for good)', async (_name, how) => {
    const settled: Array<number | undefined> = []
    const port = await serve((_req, res) => {
      settleWhenOver(res, (status) => settled.push(status), true)
      if (how === 'destroy') {
        setTimeout(() => res.destroy(), 30)
        return
      }
      const source = new PassThrough()
      source.write('first chunk')
      // like stream.pipeline: a response closed early destroys what feeds it, and the response
      res.once('close', () => {
        source.destroy()
        if (how === 'pipeline') res.destroy()
      })
      source.pipe(res)
    })
    const socket = connect(port, '127.0.0.1')
    await new Promise((resolve) => socket.once('connect', resolve))
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    if (how !== 'destroy') {
      await new Promise((resolve) => socket.once('data', resolve))
      socket.destroy()
    }
    await until(() => settled.length === 1)
    // destroyed under a client still there, the response failed (before: an abort, which
    // skipFailedRequests did not refund); a client that left first aborted it
    expect(settled).toEqual([how === 'destroy' ? 500 : undefined])
    socket.destroy()
  })
})

describe('handlerDone', () => {
  const response = () =>
    Object.assign(new EventEmitter(), {
      statusCode: 200,
      writableFinished: false,
      closed: true,
      end() {},
    })

  it('a gone client is over when the handler says so; a streamed body, once it closes', async () => {
    const plain = response()
    const settled: Array<number | undefined> = []
    settleWhenOver(plain, (status) => settled.push(status), true)
    expect(settled).toEqual([])
    handlerDone(plain)
    handlerDone(plain)
    expect(settled).toEqual([undefined])

    const streamed = response()
    settleWhenOver(streamed, (status) => settled.push(status), true)
    const body = new PassThrough()
    handlerDone(streamed, body)
    expect(settled).toEqual([undefined])
    body.destroy()
    await until(() => settled.length === 2)
  })

  it('untilHandlerDone passes the downstream through untouched when nothing is owed', async () => {
    const run = Promise.resolve(7)
    expect(
      untilHandlerDone(
        response(),
        () => run,
        () => undefined,
      ),
    ).toBe(run)
    const owed = response()
    const settled: Array<number | undefined> = []
    settleWhenOver(owed, (status) => settled.push(status), true)
    await expect(
      untilHandlerDone(
        owed,
        () => Promise.reject(new Error('boom')),
        () => undefined,
      ),
    ).rejects.toThrow('boom')
    expect(settled).toEqual([undefined])
  })
})
