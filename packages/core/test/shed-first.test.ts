// shedFirst: a shedder asked before the framework, on a real listening Node server.
import { once } from 'node:events'
import { Agent, createServer, type IncomingMessage, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { SHED_HOOKS } from '../src/shed/hooks.js'
import { createShedder, type Shedder, type ShedderOptions, shedFirst } from '../src/shed/index.js'
import { tickShedder } from '../src/shed/shedder.js'

const servers: Server[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    server.close()
  }
  vi.restoreAllMocks()
})

// A shedder over its thresholds once ticked, with traffic seen in normal and low: low is shed.
function sheddingLow(): Shedder {
  const shedder = createShedder({
    [SHED_HOOKS]: {
      manual: true,
      signals: { read: () => ({ elu: 1, delayMs: 0, heapUsedBytes: 0 }), close() {} },
    },
  } as ShedderOptions)
  for (const p of ['normal', 'low'] as const) {
    const a = shedder.admit(p)
    if (a.admitted) a.done()
  }
  tickShedder(shedder)
  expect(shedder.state().shedding).toEqual(['low'])
  return shedder
}

async function listen(
  handler: (req: IncomingMessage, res: import('node:http').ServerResponse) => void,
) {
  const server = createServer(handler)
  servers.push(server)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return (server.address() as AddressInfo).port
}

interface Answer {
  status: number
  headers: IncomingMessage['headers']
  body: string
}

function ask(port: number, headers: Record<string, string> = {}, agent?: Agent, body?: string) {
  return new Promise<Answer>((resolve, reject) => {
    const req = request(
      { port, host: '127.0.0.1', path: '/work', method: body ? 'POST' : 'GET', headers, agent },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (c) => {
          text += c
        })
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }),
        )
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

const byHeader = (req: IncomingMessage) => (req.headers['x-priority'] === 'low' ? 'low' : 'normal')

describe('shedFirst', () => {
  it('answers a shed request with 503 before the framework, and passes the rest on', async () => {
    const shedder = sheddingLow()
    let reached = 0
    const port = await listen(
      shedFirst(
        shedder,
        (_req, res) => {
          reached++
          res.end('ok')
        },
        { priority: byHeader },
      ),
    )
    const shed = await ask(port, { 'x-priority': 'low' })
    expect(shed.status).toBe(503)
    expect(Number(shed.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    expect(shed.headers['content-type']).toBe('application/problem+json')
    expect(JSON.parse(shed.body)).toMatchObject({ status: 503, title: 'Service Unavailable' })
    expect(shed.headers['cache-control']).toBe('no-store')
    // sent whole, not in chunked encoding
    expect(shed.headers['transfer-encoding']).toBeUndefined()
    expect(Number(shed.headers['content-length'])).toBe(Buffer.byteLength(shed.body))
    expect(reached).toBe(0)
    const ok = await ask(port)
    expect(ok).toMatchObject({ status: 200, body: 'ok' })
    expect(reached).toBe(1)
    expect(shedder.state()).toMatchObject({ shed: 1, inflight: 0 })
  })

  it('holds the admission until the response closes, also when the client leaves', async () => {
    const shedder = sheddingLow()
    const pending: import('node:http').ServerResponse[] = []
    const port = await listen(shedFirst(shedder, (_req, res) => void pending.push(res)))
    const first = ask(port)
    await vi.waitFor(() => expect(pending).toHaveLength(1))
    expect(shedder.state().inflight).toBe(1)
    pending[0]?.end('done')
    await first
    await vi.waitFor(() => expect(shedder.state().inflight).toBe(0))
    // a client that hangs up: the admission ends with the connection
    const agent = new Agent({ keepAlive: false })
    const gone = ask(port, {}, agent).catch(() => 'reset')
    await vi.waitFor(() => expect(pending).toHaveLength(2))
    expect(shedder.state().inflight).toBe(1)
    agent.destroy()
    await gone
    await vi.waitFor(() => expect(shedder.state().inflight).toBe(0))
  })

  it('keeps a kept-alive connection usable after shedding a request with a body', async () => {
    const shedder = sheddingLow()
    const port = await listen(
      shedFirst(shedder, (_req, res) => res.end('ok'), { priority: byHeader }),
    )
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    try {
      const shed = await ask(port, { 'x-priority': 'low' }, agent, 'x'.repeat(10_000))
      expect(shed.status).toBe(503)
      expect(await ask(port, {}, agent)).toMatchObject({ status: 200, body: 'ok' })
    } finally {
      agent.destroy()
    }
  })

  it('lets a request through unshed, with one warning, when its priority function throws', async () => {
    const shedder = sheddingLow()
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {})
    const port = await listen(
      shedFirst(shedder, (_req, res) => res.end('ok'), {
        priority: (req) => {
          if (req.headers['x-priority'] === 'bad') return 'urgent' as never
          throw new Error('no class')
        },
      }),
    )
    expect(await ask(port)).toMatchObject({ status: 200 })
    expect(await ask(port, { 'x-priority': 'bad' })).toMatchObject({ status: 200 })
    expect(warn).toHaveBeenCalledTimes(1)
    expect(String(warn.mock.calls[0]?.[0])).toMatch(/no class/)
  })

  it('refuses bad arguments at construction, naming them', () => {
    const shedder = sheddingLow()
    const ok = () => {}
    expect(() => shedFirst({} as Shedder, ok)).toThrow(/`shedder`/)
    expect(() => shedFirst(shedder, 'app' as never)).toThrow(/`listener`/)
    expect(() => shedFirst(shedder, ok, { priority: 'urgent' as never })).toThrow(/`priority`/)
    expect(() => shedFirst(shedder, ok, { priority: 'low' })).not.toThrow()
  })
})
