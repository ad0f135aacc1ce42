// Only requests that reach the handler teach the adaptive limit: an admission ended with
// `done({ ignore: true })` (a rate limiter's refusal, a failed check, a queue's refusal) leaves
// in-flight and records no round trip. Every clock here is injected: nothing depends on speed.
import { once } from 'node:events'
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { owedOnce } from '../src/http/owed.js'
import { withAdmission } from '../src/http/shed.js'
import { ShedQueue } from '../src/http/shed-queue.js'
import type { RateLimitCheck } from '../src/http/types.js'
import { SHED_HOOKS, type ShedHooks } from '../src/shed/hooks.js'
import {
  type AdaptiveLease,
  type AdaptiveOptions,
  createAdaptiveLimit,
  createShedder,
  type DoneOptions,
  type ShedAdmitted,
  type Shedder,
  type ShedderOptions,
  shedFirst,
} from '../src/shed/index.js'

const closers: (() => void)[] = []
afterEach(() => {
  for (const close of closers.splice(0)) close()
})

function clocked(options: AdaptiveOptions) {
  const clock = { now: 0 }
  const hooks: ShedHooks = { now: () => clock.now, random: () => 0.5 }
  const limit = createAdaptiveLimit({
    probeInterval: '1h',
    ...options,
    [SHED_HOOKS]: hooks,
  } as AdaptiveOptions)
  return { clock, limit }
}

// A shedder with an adaptive limit on an injected clock, no timer and quiet signals.
function clockedShedder(adaptive: AdaptiveOptions): { clock: { now: number }; shedder: Shedder } {
  const clock = { now: 0 }
  const shedder = createShedder({
    adaptive: { probeInterval: '1h', ...adaptive },
    [SHED_HOOKS]: {
      now: () => clock.now,
      random: () => 0.5,
      manual: true,
      signals: { read: () => ({ elu: 0, delayMs: 0, heapUsedBytes: 0 }), close() {} },
    },
  } as ShedderOptions)
  closers.push(() => shedder.close())
  return { clock, shedder }
}

function admitted(shedder: Shedder): ShedAdmitted {
  const admission = shedder.admit()
  if (!admission.admitted) throw new Error('expected an admission')
  return admission
}

/**
 * Rounds of a service past its capacity (each served request takes 15 ms against a no-load
 * 10 ms) while a flood the rate limiter refuses passes through the limit in between: each
 * refused request holds a slot for 10 µs and ends with `end`.
 */
function floodedRounds(end: (lease: AdaptiveLease) => void): number[] {
  const { clock, limit } = clocked({ initial: 20, window: 10, minSamples: 5, probeSamples: 5 })
  // the first probe: five requests at no load measure the 10 ms round trip
  const probe = Array.from({ length: 5 }, () => limit.tryAcquire() as AdaptiveLease)
  clock.now += 10
  for (const lease of probe) lease.done()
  expect(limit.state()).toMatchObject({ baselineMs: 10, probing: false })
  const limits: number[] = []
  for (let round = 0; round < 50; round++) {
    const served: AdaptiveLease[] = []
    for (let i = 0; i < 12; i++) {
      const lease = limit.tryAcquire()
      if (lease !== undefined) served.push(lease)
    }
    for (let i = 0; i < 30; i++) {
      const lease = limit.tryAcquire()
      if (lease === undefined) continue
      clock.now += 0.01
      end(lease)
    }
    clock.now += 15
    for (const lease of served) lease.done()
    limits.push(limit.state().limit)
  }
  return limits
}

describe('createAdaptiveLimit: done({ ignore: true })', () => {
  it('learns the queueing from served requests while a flood of refusals passes through', () => {
    const ignored = floodedRounds((lease) => lease.done({ ignore: true }))
    // 15 ms against 10 ms: the limit backs off from 20 toward 20 * 10/15 + 4
    expect(ignored.at(-1)).toBeLessThan(14)
    expect(Math.max(...ignored)).toBeLessThanOrEqual(20)
    // what the flood did as samples (the bug): its 10 µs round trips hide the queueing
    const sampled = floodedRounds((lease) => lease.done())
    expect(sampled.at(-1)).toBeGreaterThan(20)
  })

  it('records nothing from an ignored lease; a later done() is a no-op', () => {
    const { clock, limit } = clocked({ window: 1, minSamples: 2, probeSamples: 1 })
    const first = limit.tryAcquire() as AdaptiveLease
    clock.now += 10
    first.done()
    expect(limit.state()).toMatchObject({ baselineMs: 10, probing: false, inflight: 0 })
    for (let i = 0; i < 100; i++) {
      const lease = limit.tryAcquire() as AdaptiveLease
      clock.now += 1
      lease.done({ ignore: true })
      lease.done()
    }
    expect(limit.state()).toMatchObject({ rttMs: undefined, inflight: 0, limit: 20 })
    for (let i = 0; i < 2; i++) {
      const lease = limit.tryAcquire() as AdaptiveLease
      clock.now += 10
      lease.done()
    }
    expect(limit.state().rttMs).toBe(10)
  })

  it("gives a probe's tag back: the probe measures as many requests that ran", () => {
    const { clock, limit } = clocked({ minSamples: 1000, probeSamples: 3 })
    const [a, b, c] = [1, 2, 3].map(() => limit.tryAcquire() as AdaptiveLease)
    clock.now += 1
    a?.done({ ignore: true })
    clock.now += 9
    b?.done()
    c?.done()
    // two of three measured: the probe goes on, and tags the next request
    expect(limit.state().probing).toBe(true)
    const d = limit.tryAcquire() as AdaptiveLease
    clock.now += 12
    d.done()
    expect(limit.state().probing).toBe(false)
    expect(limit.state().baselineMs).toBeCloseTo((10 + 10 + 12) / 3, 9)
  })
})

describe('the adapters kit: withAdmission', () => {
  const check = (allowed: boolean) => ({ decision: { allowed }, shadow: false }) as RateLimitCheck

  it('ends the admission of a refused or failed check unlearned, and of a served one learned', async () => {
    const { clock, shedder } = clockedShedder({ window: 1, minSamples: 2, probeSamples: 1 })
    const served = () => {
      const c = withAdmission(admitted(shedder), () => check(true)) as RateLimitCheck
      clock.now += 10
      c.over?.()
    }
    served()
    expect(shedder.state().adaptive).toMatchObject({ baselineMs: 10, probing: false })
    const fail = new Error('store down')
    for (let i = 0; i < 50; i++) {
      const refused = withAdmission(admitted(shedder), () => check(false)) as RateLimitCheck
      expect(refused.over).toBeUndefined()
      clock.now += 0.01
      expect(() =>
        withAdmission(admitted(shedder), () => {
          throw fail
        }),
      ).toThrow(fail)
      clock.now += 0.01
      await expect(withAdmission(admitted(shedder), () => Promise.reject(fail))).rejects.toBe(fail)
      const later = await withAdmission(admitted(shedder), async () => check(false))
      expect(later.over).toBeUndefined()
      clock.now += 0.01
    }
    expect(shedder.state()).toMatchObject({ inflight: 0, adaptive: { rttMs: undefined } })
    served()
    served()
    expect(shedder.state().adaptive?.rttMs).toBe(10)
  })

  it('`over` ends ignored when given the status of a refusal further on (429, 503)', () => {
    const { clock, shedder } = clockedShedder({ window: 1, minSamples: 2, probeSamples: 1 })
    const overWith = (status: number | undefined, ms: number) => {
      const c = withAdmission(admitted(shedder), () => check(true)) as RateLimitCheck
      clock.now += ms
      ;(c.over as (status?: number) => void)(status)
    }
    overWith(200, 10)
    expect(shedder.state().adaptive).toMatchObject({ baselineMs: 10, probing: false })
    for (let i = 0; i < 20; i++) overWith(i % 2 === 0 ? 429 : 503, 0.01)
    expect(shedder.state()).toMatchObject({ inflight: 0, adaptive: { rttMs: undefined } })
    // a handler's own error, and a client that left, are samples
    overWith(500, 12)
    overWith(undefined, 8)
    expect(shedder.state().adaptive?.rttMs).toBe(10)
  })

  it('a request a limiter further on refuses (429), ended as adapters end it, teaches nothing', () => {
    // The first limiter admits, so the admission ends when the response does, through owedOnce
    // (what every adapter's lifecycle calls) with the response's final status.
    const { clock, shedder } = clockedShedder({ window: 1, minSamples: 2, probeSamples: 1 })
    const rl = {
      skipSuccessfulRequests: false,
      skipFailedRequests: false,
      skipAbortedRequests: false,
    } as Parameters<typeof owedOnce>[0]
    const end = (status: number | undefined, ms: number) => {
      const c = withAdmission(admitted(shedder), () => ({ ...check(true), leases: false }))
      clock.now += ms
      owedOnce(rl, c as RateLimitCheck)?.(status)
    }
    end(200, 10)
    for (let i = 0; i < 50; i++) end(429, 0.01)
    expect(shedder.state()).toMatchObject({ inflight: 0, adaptive: { rttMs: undefined } })
    end(200, 10)
    end(500, 10)
    expect(shedder.state().adaptive?.rttMs).toBe(10)
  })

  it("a shadow limiter's refusal goes on to the handler, and teaches the limit", () => {
    const { clock, shedder } = clockedShedder({ window: 1, minSamples: 1, probeSamples: 1 })
    for (let i = 0; i < 2; i++) {
      const shadow = { ...check(false), shadow: true }
      const c = withAdmission(admitted(shedder), () => shadow) as RateLimitCheck
      expect(c.over).toBeTypeOf('function')
      clock.now += 7
      c.over?.()
    }
    expect(shedder.state().adaptive).toMatchObject({ baselineMs: 7, rttMs: 7 })
  })
})

describe('shedFirst', () => {
  async function listen(listener: (req: IncomingMessage, res: ServerResponse) => void) {
    const server = createServer(listener)
    closers.push(() => {
      server.closeAllConnections()
      server.close()
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    return (server.address() as AddressInfo).port
  }

  function get(port: number, path: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = request({ port, host: '127.0.0.1', path }, (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
      })
      req.on('error', reject)
      req.end()
    })
  }

  it('a response the framework refuses (429, 503) teaches the adaptive limit nothing', async () => {
    const { clock, shedder } = clockedShedder({ window: 1, minSamples: 2, probeSamples: 1 })
    const port = await listen(
      shedFirst(shedder, (req, res) => {
        // a rate limit or an overloaded handler answers at once; the work takes 10 ms
        if (req.url === '/429' || req.url === '/503') res.statusCode = Number(req.url.slice(1))
        else clock.now += 10
        res.end()
      }),
    )
    const served = async () => {
      expect(await get(port, '/work')).toBe(200)
      while (shedder.state().inflight > 0) await new Promise((r) => setImmediate(r))
    }
    await served()
    expect(shedder.state().adaptive).toMatchObject({ baselineMs: 10, probing: false })
    for (let i = 0; i < 5; i++) {
      expect(await get(port, i % 2 === 0 ? '/429' : '/503')).toBe(i % 2 === 0 ? 429 : 503)
      while (shedder.state().inflight > 0) await new Promise((r) => setImmediate(r))
    }
    await served()
    await served()
    expect(shedder.state().adaptive?.rttMs).toBe(10)
  })

  it('its queue ends the admissions it refuses, or never runs, unlearned', async () => {
    const { shedder } = clockedShedder({})
    const ends: (DoneOptions | undefined)[][] = [[], [], []]
    const admission = (i: number): ShedAdmitted => ({
      admitted: true,
      done: (options) => void ends[i]?.push(options),
    })
    const ran: number[] = []
    const refused: number[] = []
    const queue = new ShedQueue(
      shedder,
      (req) => void ran.push(Number(req.url)),
      (_res, retryAfterMs) => void refused.push(retryAfterMs),
      { maxWaitMs: 1e9, maxSize: 1 },
    )
    const live = { destroyed: false } as ServerResponse
    const socket = { socket: { destroyed: false } }
    queue.add({ url: '0', ...socket } as never, live, 2, admission(0))
    // the queue is full: refused at once
    queue.add({ url: '1', ...socket } as never, live, 2, admission(1))
    expect(ends[1]).toEqual([{ ignore: true }])
    expect(refused).toHaveLength(1)
    await new Promise((r) => setImmediate(r))
    expect(ran).toEqual([0])
    // its client hung up while it waited: it never runs
    queue.add(
      { url: '2', ...socket } as never,
      { destroyed: true } as ServerResponse,
      2,
      admission(2),
    )
    await new Promise((r) => setImmediate(r))
    expect(ran).toEqual([0])
    expect(ends).toEqual([[], [{ ignore: true }], [{ ignore: true }]])
  })
})
