// shedFirst's `queue`: critical first within the event loop, on real listening Node servers fed
// by raw sockets, so the test decides what the server reads in one go.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { connect, type Socket } from 'node:net'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { SHED_HOOKS } from '../src/shed/hooks.js'
import {
  createShedder,
  SHED_CHANNEL,
  type Shedder,
  type ShedderOptions,
  type ShedEvent,
  type ShedFirstOptions,
  shedFirst,
} from '../src/shed/index.js'

const servers: Server[] = []
const sockets: Socket[] = []
afterEach(() => {
  vi.restoreAllMocks()
  for (const socket of sockets.splice(0)) socket.destroy()
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    server.close()
  }
})

// A shedder that sheds nothing by itself (signals always quiet), optionally in shadow mode.
function quietShedder(mode: 'enforce' | 'shadow' = 'enforce'): Shedder {
  return createShedder({
    mode,
    [SHED_HOOKS]: {
      manual: true,
      signals: { read: () => ({ elu: 0, delayMs: 0, heapUsedBytes: 0 }), close() {} },
    },
  } as ShedderOptions)
}

function spin(ms: number): void {
  const end = performance.now() + ms
  while (performance.now() < end) {}
}

const classOf = (req: IncomingMessage) => {
  const p = req.headers['x-priority']
  return p === 'critical' || p === 'normal' ? p : 'low'
}

// A server behind shedFirst whose handler records `n` of each request it runs, spins for
// `x-spin` ms if asked, and answers `n=<n>`.
async function server(shedder: Shedder, queue: NonNullable<ShedFirstOptions['queue']>) {
  const seen: number[] = []
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    seen.push(Number(new URL(req.url ?? '/', 'http://x').searchParams.get('n')))
    spin(Number(req.headers['x-spin'] ?? 0))
    res.end(`n=${seen.at(-1)}`)
  }
  const http = createServer(shedFirst(shedder, handler, { priority: classOf, queue }))
  servers.push(http)
  let accepted = 0
  http.on('connection', () => accepted++)
  http.listen(0, '127.0.0.1')
  await once(http, 'listening')
  const port = (http.address() as AddressInfo).port
  return { port, seen, accepted: () => accepted }
}

function requestText(n: number, priority: string, spinMs = 0): string {
  const spinHeader = spinMs > 0 ? `x-spin: ${spinMs}\r\n` : ''
  return `GET /work?n=${n} HTTP/1.1\r\nhost: x\r\nx-priority: ${priority}\r\n${spinHeader}\r\n`
}

async function open(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1')
  sockets.push(socket)
  await once(socket, 'connect')
  return socket
}

interface Reply {
  status: number
  retryAfter: string | undefined
  body: string
}

// The next `count` responses on `socket`, in the order they arrive (bodies carry a length).
function replies(socket: Socket, count: number): Promise<Reply[]> {
  return new Promise((resolve, reject) => {
    let text = ''
    const parsed: Reply[] = []
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1')
      for (;;) {
        const end = text.indexOf('\r\n\r\n')
        if (end < 0) break
        const head = text.slice(0, end)
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0)
        if (text.length < end + 4 + length) break
        parsed.push({
          status: Number(head.slice(9, 12)),
          retryAfter: /retry-after: (\d+)/i.exec(head)?.[1],
          body: text.slice(end + 4, end + 4 + length),
        })
        text = text.slice(end + 4 + length)
      }
      if (parsed.length >= count) {
        socket.off('data', onData)
        resolve(parsed)
      }
    }
    socket.on('data', onData)
    socket.once('error', reject)
  })
}

describe('shedFirst with queue', () => {
  it('runs a critical request before the queued ones, and answers pipelined requests in order', async () => {
    const { port, seen } = await server(quietShedder(), true)
    const socket = await open(port)
    const answered = replies(socket, 6)
    // one write: the server parses all six in one read
    socket.write(
      [1, 2, 3, 4, 5].map((n) => requestText(n, 'low')).join('') + requestText(6, 'critical'),
    )
    const got = await answered
    expect(seen).toEqual([6, 1, 2, 3, 4, 5])
    // Node sends the responses of one connection in the order of its requests
    expect(got.map((r) => r.body)).toEqual(['n=1', 'n=2', 'n=3', 'n=4', 'n=5', 'n=6'])
    expect(got.every((r) => r.status === 200)).toBe(true)
  })

  it('runs a critical request read in the same turn as low ones on other connections first', async () => {
    const shedder = quietShedder()
    const { port, seen, accepted } = await server(shedder, {})
    const lows = await Promise.all([1, 2, 3, 4].map(() => open(port)))
    const critical = await open(port)
    await vi.waitFor(() => expect(accepted()).toBe(5))
    const answered = [...lows, critical].map((s) => replies(s, 1))
    for (const [i, s] of lows.entries()) s.write(requestText(i + 1, 'low', 2))
    critical.write(requestText(5, 'critical'))
    // the server's loop is this one: blocked while the kernel delivers all five
    spin(30)
    await Promise.all(answered)
    expect(seen[0]).toBe(5)
    expect([...seen].sort()).toEqual([1, 2, 3, 4, 5])
    expect(shedder.state().inflight).toBe(0)
  })

  it('refuses a request that waited past maxWait: 503, Retry-After, shed by signal queue', async () => {
    const shedder = quietShedder()
    const events: ShedEvent[] = []
    const onShed = (event: unknown) => void events.push(event as ShedEvent)
    subscribe(SHED_CHANNEL, onShed)
    try {
      const { port, seen } = await server(shedder, { maxWait: 20 })
      const socket = await open(port)
      const answered = replies(socket, 4)
      // the critical request holds the loop 60 ms while the two low ones wait
      socket.write(
        requestText(1, 'low') +
          requestText(2, 'normal') +
          requestText(3, 'critical', 60) +
          requestText(4, 'critical'),
      )
      const got = await answered
      expect(got.map((r) => r.status)).toEqual([503, 503, 200, 200])
      expect(Number(got[0]?.retryAfter)).toBeGreaterThanOrEqual(1)
      expect(JSON.parse(got[0]?.body ?? '')).toMatchObject({ status: 503 })
      expect(seen).toEqual([3, 4])
      expect(shedder.state().shed).toBe(2)
      expect(events).toEqual([
        { shedder: 'shedder', priority: 'normal', signal: 'queue', shadow: false },
        { shedder: 'shedder', priority: 'low', signal: 'queue', shadow: false },
      ])
      await vi.waitFor(() => expect(shedder.state().inflight).toBe(0))
    } finally {
      unsubscribe(SHED_CHANNEL, onShed)
    }
  })

  it('in shadow mode counts a stale request as shed and runs it', async () => {
    const shedder = quietShedder('shadow')
    const { port, seen } = await server(shedder, { maxWait: 20 })
    const socket = await open(port)
    const answered = replies(socket, 2)
    socket.write(requestText(1, 'low') + requestText(2, 'critical', 60))
    expect((await answered).map((r) => r.status)).toEqual([200, 200])
    expect(seen).toEqual([2, 1])
    expect(shedder.state().shed).toBe(1)
  })

  it('refuses at once what comes past maxSize', async () => {
    const shedder = quietShedder()
    const { port, seen } = await server(shedder, { maxSize: 2 })
    const socket = await open(port)
    const answered = replies(socket, 4)
    socket.write(
      requestText(1, 'low') +
        requestText(2, 'low') +
        requestText(3, 'low') +
        requestText(4, 'critical'),
    )
    expect((await answered).map((r) => r.status)).toEqual([200, 200, 503, 200])
    expect(seen).toEqual([4, 1, 2])
    expect(shedder.state().shed).toBe(1)
  })

  it('never runs a queued request whose client hung up, and ends its admission', async () => {
    const shedder = quietShedder()
    const { port, seen, accepted } = await server(shedder, true)
    const gone = await open(port)
    const blocker = await open(port)
    await vi.waitFor(() => expect(accepted()).toBe(2))
    const answered = replies(blocker, 1)
    // both queued in one read; the normal one runs first and holds the loop 30 ms, and the
    // next read sees the low one's client gone
    blocker.write(requestText(1, 'normal', 30))
    gone.write(requestText(2, 'low'))
    gone.destroy()
    spin(30)
    await answered
    await vi.waitFor(() => expect(shedder.state().inflight).toBe(0))
    // a later request runs: the queue goes on
    const later = await open(port)
    const after = replies(later, 1)
    later.write(requestText(3, 'low'))
    expect((await after)[0]?.status).toBe(200)
    expect(seen).toEqual([1, 3])
    expect(shedder.state().shed).toBe(0)
  })

  it('lets a queued listener throw from its turn, as from the request event, and goes on', () => {
    const shedder = quietShedder()
    const ran: string[] = []
    const turns: (() => void)[] = []
    vi.spyOn(globalThis, 'setImmediate').mockImplementation(((fn: () => void) => {
      turns.push(fn)
    }) as never)
    const handler = shedFirst(
      shedder,
      (req) => {
        ran.push(String(req.url))
        if (req.url === '/boom') throw new Error('boom')
      },
      { priority: 'low', queue: true },
    )
    const req = (url: string) => ({ url, headers: {}, socket: { destroyed: false } }) as never
    const res = () => ({ destroyed: false, once() {} }) as never
    handler(req('/boom'), res())
    handler(req('/next'), res())
    expect(turns).toHaveLength(1)
    expect(() => turns.shift()?.()).toThrow('boom')
    // the rest runs at the next turn
    expect(turns).toHaveLength(1)
    turns.shift()?.()
    expect(ran).toEqual(['/boom', '/next'])
  })

  it('refuses bad queue options at construction, naming them', () => {
    const shedder = quietShedder()
    const ok = () => {}
    const bad: [unknown, RegExp][] = [
      ['yes', /`queue`/],
      [{ maxWait: 0 }, /`queue\.maxWait`/],
      [{ maxWait: '1 fortnight' }, /`queue\.maxWait`/],
      [{ maxSize: 0 }, /`queue\.maxSize`.*0/],
      [{ maxSize: 1.5 }, /`queue\.maxSize`.*1\.5/],
    ]
    for (const [queue, message] of bad)
      expect(() => shedFirst(shedder, ok, { queue: queue as never })).toThrow(message)
    for (const queue of [true, false, {}, { maxWait: '50ms', maxSize: 10 }])
      expect(() => shedFirst(shedder, ok, { queue })).not.toThrow()
    expect(() => shedFirst({ admit() {} } as never, ok, { queue: true })).toThrow(/`shedder`/)
    expect(() => shedder.refuse('low', 'slow' as never)).toThrow(/`signal`.*slow/)
  })
})
