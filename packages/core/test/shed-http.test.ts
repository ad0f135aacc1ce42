// The README's middleware pattern on a real node:http server: 503 with Retry-After for a shed
// class, and in-flight back to zero when responses end, finished or abandoned.
import { once } from 'node:events'
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, expect, it } from 'vitest'
import { SHED_HOOKS } from '../src/shed/hooks.js'
import { createShedder, type Priority, type ShedderOptions } from '../src/shed/index.js'
import { tickShedder } from '../src/shed/shedder.js'

let server: Server | undefined
afterEach(async () => {
  server?.closeAllConnections()
  if (server) await new Promise((r) => server?.close(r))
  server = undefined
})

function get(
  port: number,
  priority: Priority,
  path = '/',
): Promise<{ status: number; retryAfter: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request({ port, path, headers: { 'x-priority': String(priority) } }, (res) => {
      res.resume()
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] }),
      )
    })
    req.on('error', reject)
    req.end()
  })
}

it('refuses a shed class with 503 and Retry-After; done on close ends every request', async () => {
  let elu = 0.1
  const shedder = createShedder({
    recovery: 2,
    [SHED_HOOKS]: {
      manual: true,
      signals: { read: () => ({ elu, delayMs: 0, heapUsedBytes: 0 }), close() {} },
    },
  } as ShedderOptions)
  const hanging: (() => void)[] = []
  server = createServer((req, res) => {
    const header = String(req.headers['x-priority'])
    const priority = (/^\d+$/.test(header) ? Number(header) : header) as Priority
    const admission = shedder.admit(priority)
    if (!admission.admitted) {
      res.setHeader('Retry-After', String(Math.ceil(admission.retryAfterMs / 1000)))
      res.statusCode = 503
      res.end('Overloaded, retry later')
      return
    }
    res.on('close', admission.done)
    if (req.url === '/hang') hanging.push(() => res.end('late'))
    else res.end('ok')
  })
  server.listen(0)
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo

  expect(await get(port, 'low')).toMatchObject({ status: 200 })
  elu = 0.99
  tickShedder(shedder)
  expect(await get(port, 'low')).toEqual({ status: 503, retryAfter: '2' })
  expect(await get(port, 'critical')).toMatchObject({ status: 200 })
  expect(await get(port, 'normal')).toMatchObject({ status: 200 })

  // a client that gives up: the response closes unfinished, and done() still runs
  const abandoned = request({ port, path: '/hang', headers: { 'x-priority': 'high' } })
  abandoned.on('error', () => {})
  abandoned.end()
  while (shedder.state().inflight === 0) await new Promise((r) => setImmediate(r))
  abandoned.destroy()
  while (shedder.state().inflight > 0) await new Promise((r) => setImmediate(r))
  expect(hanging).toHaveLength(1)
  expect(shedder.state()).toMatchObject({ inflight: 0, shed: 1, shedding: ['low'] })

  elu = 0.1
  tickShedder(shedder)
  tickShedder(shedder)
  expect(await get(port, 'low')).toMatchObject({ status: 200 })
  expect(shedder.state().inflight).toBe(0)
  shedder.close()
})
