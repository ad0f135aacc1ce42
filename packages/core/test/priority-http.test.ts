// The adapters' `priority` option through the kit (here the Fetch kit): a concurrency policy's
// fleet reserve answers 503 with Retry-After to the classes it keeps out, never 429.
import { describe, expect, it } from 'vitest'
import { createFetchLimiter } from '../src/fetch/index.js'
import { probeOf, withDefaults } from '../src/http/defaults.js'
import { MemoryStore } from '../src/index.js'
import { SHED_HOOKS } from '../src/shed/hooks.js'
import { createShedder, type Priority, type ShedderOptions } from '../src/shed/index.js'
import { tickShedder } from '../src/shed/shedder.js'

const url = 'http://app.test/'
const from = (ip: string) => ({ ip })

// A handler whose responses end when `finish()` is called (the lease is held until then).
function holding() {
  const finishers: Array<() => void> = []
  const handler = () =>
    Promise.resolve(
      new Response(
        new ReadableStream<Uint8Array>({
          start(c) {
            c.enqueue(new TextEncoder().encode('a'))
          },
          pull(c) {
            return new Promise<void>((resolve) => {
              finishers.push(() => {
                c.close()
                resolve()
              })
            })
          },
        }),
      ),
    )
  const finishAll = () => {
    for (const f of finishers.splice(0)) f()
  }
  return { handler, finishAll }
}

const asked = (priority: string) => new Request(url, { headers: { 'x-priority': priority } })

describe('priority and reserve through the kit', () => {
  it('limit 2, reserve { critical: 0.5 }: a low request past 1 in flight gets 503, critical gets in', async () => {
    const limit = createFetchLimiter({
      algorithm: 'concurrency',
      limit: 2,
      window: '1m',
      reserve: { critical: 0.5 },
      key: () => 'one',
      priority: (req: Request) => (req.headers.get('x-priority') ?? 'normal') as Priority,
    })
    const { handler, finishAll } = holding()
    const first = await limit.handle(asked('low'), handler, from('203.0.113.1'))
    expect(first.status).toBe(200)
    let ran = false
    const low = await limit.handle(
      asked('low'),
      () => {
        ran = true
        return handler()
      },
      from('203.0.113.1'),
    )
    expect(low.status).toBe(503)
    expect(ran).toBe(false)
    expect(Number(low.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(low.headers.get('content-type')).toBe('application/problem+json')
    expect(await low.json()).toMatchObject({ status: 503, title: 'Service Unavailable' })
    const critical = await limit.handle(asked('critical'), handler, from('203.0.113.1'))
    expect(critical.status).toBe(200)
    // full: even critical is refused now, and that refusal is the client's own (429)
    const over = await limit.handle(asked('critical'), handler, from('203.0.113.1'))
    expect(over.status).toBe(429)
    finishAll()
    await Promise.all([first.text(), critical.text()])
  })

  it('validates a fixed priority at construction, naming the option', () => {
    expect(() =>
      createFetchLimiter({
        algorithm: 'concurrency',
        limit: 2,
        window: '1m',
        priority: 'urgent' as never,
      }),
    ).toThrow(/`priority`/)
  })
})

// A shedder whose intervals pass on tick(), over its delay threshold while `hot` is set.
function forcedShedder() {
  const world = { now: 0, hot: false }
  const shedder = createShedder({
    adaptive: false,
    [SHED_HOOKS]: {
      manual: true,
      now: () => world.now,
      signals: {
        read: () => ({ elu: 0.1, delayMs: world.hot ? 10_000 : 1, heapUsedBytes: 1e8 }),
        close: () => {},
      },
    },
  } as ShedderOptions)
  const tick = () => {
    world.now += 1000
    tickShedder(shedder)
  }
  return { shedder, world, tick }
}

describe('the shed option through the kit', () => {
  it('sheds low with 503 and Retry-After before counting; admitted requests end their admission', async () => {
    const { shedder, world, tick } = forcedShedder()
    // traffic in normal and low, then one interval over: low is shed
    for (const p of ['normal', 'low'] as const) {
      const a = shedder.admit(p)
      if (a.admitted) a.done()
    }
    world.hot = true
    tick()
    expect(shedder.state().shedding).toEqual(['low'])
    const store = new MemoryStore()
    const limit = createFetchLimiter({
      limit: 5,
      window: '1m',
      store,
      key: () => 'shed',
      shed: shedder,
      priority: (req: Request) => (req.headers.get('x-priority') ?? 'normal') as Priority,
    })
    let ran = 0
    const shed = await limit.handle(
      asked('low'),
      () => {
        ran++
        return Promise.resolve(new Response('ok'))
      },
      from('203.0.113.2'),
    )
    expect(shed.status).toBe(503)
    expect(ran).toBe(0)
    expect(Number(shed.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(shed.headers.get('ratelimit')).toBeNull()
    expect(await shed.json()).toMatchObject({ status: 503 })
    const ok = await limit.handle(
      asked('normal'),
      () => Promise.resolve(new Response('ok')),
      from('203.0.113.2'),
    )
    expect(ok.status).toBe(200)
    // the shed request counted nothing: this is the first of 5
    expect(ok.headers.get('ratelimit')).toMatch(/;r=4;/)
    expect(shedder.state().inflight).toBe(1)
    await ok.text()
    expect(shedder.state().inflight).toBe(0)
    shedder.close()
  })

  it('refuses a shed option that is not a shedder, naming it', () => {
    expect(() => createFetchLimiter({ limit: 1, window: '1s', shed: {} as never })).toThrow(
      /`shed`/,
    )
  })
})

describe('reserve in app-wide defaults (Fastify, Nest)', () => {
  it('stays with concurrency routes, and a probe of defaults with only a reserve is a concurrency policy', () => {
    const defaults = {
      algorithm: 'concurrency',
      limit: 2,
      window: '1m',
      reserve: { critical: 0.5 },
    }
    expect(withDefaults(defaults as never, { algorithm: 'gcra', limit: 5 }).reserve).toBeUndefined()
    expect(withDefaults(defaults as never, { limit: 4 }).reserve).toEqual({ critical: 0.5 })
    expect(probeOf({ reserve: { critical: 0.5 } } as never).algorithm).toBe('concurrency')
    expect(() =>
      createFetchLimiter(probeOf({ reserve: { critical: 1.5 } } as never) as never),
    ).toThrow(/`reserve.critical`/)
  })
})

describe('a priority callback that misbehaves', () => {
  it('fails the request with a LimiterError naming `priority`, counting nothing', async () => {
    const limit = createFetchLimiter({
      limit: 1,
      window: '1m',
      key: () => 'bad',
      priority: () => 'urgent' as never,
    })
    await expect(
      limit.handle(
        new Request(url),
        () => Promise.resolve(new Response('ok')),
        from('203.0.113.3'),
      ),
    ).rejects.toMatchObject({
      name: 'LimiterError',
      code: 'ERR_LIMITER_OPTION',
      message: expect.stringMatching(/`priority` returned .*urgent/),
    })
  })
})
