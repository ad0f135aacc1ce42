// The adaptive limit against a simulated service (injected clock): a service with capacity C
// answers in `base` ms up to C requests in flight, and base * inflight / C beyond (queueing).
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { describe, expect, it } from 'vitest'
import { SHED_HOOKS, type ShedHooks } from '../src/shed/hooks.js'
import {
  ADAPTIVE_CHANNEL,
  type AdaptiveLease,
  type AdaptiveOptions,
  type AdaptiveState,
  createAdaptiveLimit,
  createShedder,
  type ShedderOptions,
} from '../src/shed/index.js'
import { tickShedder } from '../src/shed/shedder.js'

interface Service {
  capacity: number
  baseMs: number
  /** Each latency is scaled by a uniform factor in [1 - noise, 1 + noise] (default 0). */
  noise?: number
}

// seeded, so a run is the same every time
function lcg(seed: number): () => number {
  let x = seed
  return () => {
    x = (x * 1_103_515_245 + 12_345) % 2 ** 31
    return x / 2 ** 31
  }
}

/**
 * Runs `clients` closed-loop clients against `service` for `untilMs` of simulated time: a client
 * whose request ends asks again at once; a refused one waits for the next request to end. Calls
 * `run`'s `each` with the limit's state after every request that ends.
 */
function simulate(options: AdaptiveOptions, service: Service, clients: number) {
  const clock = { now: 0 }
  const hooks: ShedHooks = { now: () => clock.now, random: lcg(7) }
  const noise = lcg(11)
  const limit = createAdaptiveLimit({ ...options, [SHED_HOOKS]: hooks } as AdaptiveOptions)
  // requests in flight, ordered by when they end (latest first: pop() is the next)
  const flight: { endMs: number; lease: AdaptiveLease }[] = []
  let waiting = clients
  const admit = () => {
    while (waiting > 0) {
      const lease = limit.tryAcquire()
      if (lease === undefined) return
      waiting--
      const jitter = 1 + (service.noise ?? 0) * (2 * noise() - 1)
      const latency = service.baseMs * jitter * Math.max(1, (flight.length + 1) / service.capacity)
      const endMs = clock.now + latency
      let i = flight.length
      while (i > 0 && (flight[i - 1] as { endMs: number }).endMs < endMs) i--
      flight.splice(i, 0, { endMs, lease })
    }
  }
  const run = (untilMs: number, each?: (s: AdaptiveState, nowMs: number) => void) => {
    admit()
    while (clock.now < untilMs) {
      const next = flight.pop()
      if (next === undefined) throw new Error('nothing in flight')
      clock.now = next.endMs
      next.lease.done()
      waiting++
      admit()
      each?.(limit.state(), clock.now)
    }
  }
  return { limit, service, run }
}

// Math.min(...xs) overflows the stack on a long run; an empty run fails
function minOf(xs: readonly number[]): number {
  expect(xs.length).toBeGreaterThan(0)
  return xs.reduce((a, b) => Math.min(a, b))
}
function maxOf(xs: readonly number[]): number {
  expect(xs.length).toBeGreaterThan(0)
  return xs.reduce((a, b) => Math.max(a, b))
}

const C = 100
const options: AdaptiveOptions = { min: 4, max: 1000, probeInterval: '60s' }

describe('createAdaptiveLimit', () => {
  it('converges within 10% of the capacity from below, and probes without pinning traffic', () => {
    const sim = simulate(options, { capacity: C, baseMs: 100 }, 3 * C)
    const probes: AdaptiveState[] = []
    sim.run(60_000, (s) => {
      if (s.probing) probes.push(s)
    })
    const limits: number[] = []
    sim.run(240_000, (s) => {
      if (s.probing) probes.push(s)
      else limits.push(s.limit)
    })
    expect(minOf(limits)).toBeGreaterThanOrEqual(0.9 * C)
    expect(maxOf(limits)).toBeLessThanOrEqual(1.1 * C)
    expect(sim.limit.state().baselineMs).toBeCloseTo(100, 5)
    // probes (one at the start, then every 60 s +- 25%): capped at half the limit, not at min
    const late = probes.filter((s) => s.limit > 0.9 * C)
    expect(late.length).toBeGreaterThan(0)
    for (const s of late) {
      expect(s.cap).toBeGreaterThanOrEqual(s.limit / 2)
      expect(s.cap).toBeLessThanOrEqual(s.limit / 2 + 1)
    }
  })

  it('backs off when the capacity halves (latency doubles), converging to the new capacity', () => {
    const service = { capacity: C, baseMs: 100 }
    const sim = simulate(options, service, 3 * C)
    sim.run(120_000)
    expect(Math.abs(sim.limit.state().limit - C)).toBeLessThanOrEqual(0.1 * C)
    service.capacity = C / 2
    const limits: number[] = []
    sim.run(120_000 + 10_000, (s) => limits.push(s.limit))
    // within 20 windows (10 s at 500 ms): down past the middle
    expect(minOf(limits)).toBeLessThan(0.75 * C)
    const settled: number[] = []
    sim.run(240_000, (s, nowMs) => {
      if (nowMs > 180_000 && !s.probing) settled.push(s.limit)
    })
    expect(minOf(settled)).toBeGreaterThanOrEqual(0.9 * (C / 2))
    expect(maxOf(settled)).toBeLessThanOrEqual(1.1 * (C / 2))
  })

  it('backs off when latency doubles at the same capacity, and a probe learns the new baseline', () => {
    const service = { capacity: C, baseMs: 100 }
    const sim = simulate(options, service, 3 * C)
    sim.run(120_000)
    service.baseMs = 200
    const limits: number[] = []
    sim.run(130_000, (s) => limits.push(s.limit))
    expect(minOf(limits)).toBeLessThan(0.6 * C)
    // the next probes (at most 75 s apart) measure 200 ms at no load: the limit comes back
    const settled: number[] = []
    sim.run(480_000, (s, nowMs) => {
      if (nowMs > 400_000 && !s.probing) settled.push(s.limit)
    })
    expect(sim.limit.state().baselineMs).toBeCloseTo(200, 5)
    expect(minOf(settled)).toBeGreaterThanOrEqual(0.9 * C)
    expect(maxOf(settled)).toBeLessThanOrEqual(1.1 * C)
  })

  it('holds near the capacity when latency is noisy (+-30%)', () => {
    // regression: a probe that ended with its first 20 samples learned the fastest requests as
    // the no-load time, and windows dropped the requests that ended after them (the slow
    // ones): the limit fell as low as 31
    const sim = simulate(options, { capacity: C, baseMs: 100, noise: 0.3 }, 3 * C)
    sim.run(60_000)
    const limits: number[] = []
    sim.run(300_000, (s) => {
      if (!s.probing) limits.push(s.limit)
    })
    expect(minOf(limits)).toBeGreaterThanOrEqual(0.85 * C)
    expect(maxOf(limits)).toBeLessThanOrEqual(1.15 * C)
    expect(sim.limit.state().baselineMs).toBeGreaterThan(95)
  })

  it('a slow service (2 s) still finishes its probes and learns its no-load time', () => {
    // regression: a probe gave up after 10 windows (5 s), before 100 requests of 2 s could
    // end at its cap, so the no-load time was guessed from a queueing window (2.7 s here)
    const sim = simulate({ ...options, initial: 40 }, { capacity: 20, baseMs: 2000 }, 60)
    sim.run(120_000)
    expect(sim.limit.state().baselineMs).toBeCloseTo(2000, 5)
    expect(sim.limit.state().limit).toBeLessThanOrEqual(20 + 4)
  })

  it('stays within min and max', () => {
    const low = simulate({ ...options, max: 30 }, { capacity: C, baseMs: 100 }, 3 * C)
    const seen: number[] = []
    low.run(120_000, (s) => seen.push(s.limit, s.cap))
    expect(maxOf(seen)).toBe(30)
    const high = simulate({ ...options, min: 150, max: 400 }, { capacity: C, baseMs: 100 }, 5 * C)
    const floor: number[] = []
    high.run(120_000, (s) => floor.push(s.limit, s.cap))
    expect(minOf(floor)).toBe(150)
  })
})

describe('limiter:adaptive', () => {
  it('publishes each probe and each update of the limit', () => {
    const events: AdaptiveState[] = []
    const listen = (m: unknown) => events.push(m as AdaptiveState)
    subscribe(ADAPTIVE_CHANNEL, listen)
    try {
      simulate({ ...options, name: 'api' }, { capacity: C, baseMs: 100 }, 3 * C).run(10_000)
    } finally {
      unsubscribe(ADAPTIVE_CHANNEL, listen)
    }
    // the first probe starts and ends, then one update per 500 ms window
    expect(events.slice(0, 2)).toMatchObject([
      { name: 'api', probing: true, cap: 10, limit: 20 },
      { name: 'api', probing: false, baselineMs: 100 },
    ])
    expect(events.length).toBeGreaterThanOrEqual(15)
    expect(maxOf(events.map((e) => e.limit))).toBeGreaterThan(30)
  })
})

describe('a wait on purpose (waitedMs)', () => {
  it("comes off the sample: a limiter's maxDelay wait does not read as a slow service", () => {
    const clock = { now: 0 }
    const make = () =>
      createAdaptiveLimit({
        min: 4,
        max: 200,
        initial: 40,
        [SHED_HOOKS]: { now: () => clock.now, random: lcg(3) },
      } as AdaptiveOptions)
    const told = make()
    const untold = make()
    // 2 ms of work, until the last rounds, each after a wait that grows to ~1.5 s, as a burst
    // under maxDelay queues (the helper's repro: 40 -> 11 and 503s for an instant handler)
    for (let round = 0; round < 300; round++) {
      const waitedMs = Math.min(1500, round * 10)
      const leases = Array.from({ length: 10 }, () => [told.tryAcquire(), untold.tryAcquire()])
      clock.now += waitedMs + 2
      for (const [a, b] of leases) {
        a?.done({ waitedMs })
        b?.done()
      }
      clock.now += 1
    }
    expect(told.state().limit).toBeGreaterThanOrEqual(40)
    expect(told.state().baselineMs).toBeLessThan(10)
    // the same traffic without it pulls the limit down: what the test tells apart
    expect(untold.state().limit).toBeLessThan(told.state().limit)
  })
})

describe('shedder with adaptive', () => {
  it('never lets in-flight past the limit under many concurrent async admits', async () => {
    let now = 0
    const shedder = createShedder({
      adaptive: { min: 8, max: 8 },
      [SHED_HOOKS]: { manual: true, now: () => now, signals: { read: () => quiet, close() {} } },
    } as ShedderOptions)
    let inflight = 0
    let peak = 0
    let refused = 0
    const worker = async (i: number) => {
      for (let round = 0; round < 20; round++) {
        await new Promise<void>((r) => (i % 3 === 0 ? setImmediate(r) : queueMicrotask(r)))
        const admission = shedder.admit(i % 2 === 0 ? 'low' : 'high')
        if (!admission.admitted) {
          refused++
          expect(admission.signal).toBe('inflight')
          continue
        }
        inflight++
        peak = Math.max(peak, inflight, shedder.state().inflight)
        for (let k = 0; k < (i % 5) + 1; k++) await Promise.resolve()
        now += 1
        inflight--
        admission.done()
      }
    }
    await Promise.all(Array.from({ length: 200 }, (_, i) => worker(i)))
    tickShedder(shedder)
    expect(peak).toBe(8)
    expect(refused).toBeGreaterThan(0)
    expect(shedder.state()).toMatchObject({ inflight: 0, adaptive: { inflight: 0, limit: 8 } })
    // critical passes the full limit, and counts in it
    const held = Array.from({ length: 8 }, () => shedder.admit('high'))
    expect(held.every((a) => a.admitted)).toBe(true)
    expect(shedder.admit('high').admitted).toBe(false)
    const critical = shedder.admit('critical')
    expect(critical.admitted).toBe(true)
    expect(shedder.state().adaptive?.inflight).toBe(9)
    shedder.close()
  })
})

describe('reserve', () => {
  const at = (now: { ms: number }) =>
    ({ [SHED_HOOKS]: { now: () => now.ms, random: () => 0.5 } }) as AdaptiveOptions

  it('lets what is admitted without force hold only its share of the cap', () => {
    const limit = createAdaptiveLimit({ min: 10, max: 10, reserve: 0.3, ...at({ ms: 0 }) })
    const shared = Array.from({ length: 10 }, () => limit.tryAcquire())
    // 7 of 10: critical finds at most 7 ahead of it
    expect(shared.filter((l) => l !== undefined)).toHaveLength(7)
    const forced = Array.from({ length: 3 }, () => limit.tryAcquire(true))
    expect(forced.every((l) => l !== undefined)).toBe(true)
    expect(limit.state()).toMatchObject({ inflight: 10, cap: 10 })
    // one shared ends: one more shared fits, not two
    shared[0]?.done()
    const again = limit.tryAcquire()
    expect(again).toBeDefined()
    expect(limit.tryAcquire()).toBeUndefined()
    // the whole cap still bounds the shared requests: forced ones count in it
    for (const l of [...shared, again]) l?.done()
    const more = Array.from({ length: 4 }, () => limit.tryAcquire(true))
    expect(Array.from({ length: 5 }, () => limit.tryAcquire()).filter(Boolean)).toHaveLength(3)
    for (const l of [...forced, ...more]) l?.done()
  })

  it('in a shedder, keeps room for critical while low holds its share', () => {
    const shedder = createShedder({
      adaptive: { min: 10, max: 10, reserve: 0.4 },
      [SHED_HOOKS]: { manual: true, now: () => 0, signals: { read: () => quiet, close() {} } },
    } as ShedderOptions)
    const low = Array.from({ length: 8 }, () => shedder.admit('low'))
    expect(low.filter((a) => a.admitted)).toHaveLength(6)
    expect(low.at(-1)).toMatchObject({ admitted: false, signal: 'inflight', priority: 'low' })
    const critical = Array.from({ length: 4 }, () => shedder.admit('critical'))
    expect(critical.every((a) => a.admitted)).toBe(true)
    expect(shedder.state().adaptive).toMatchObject({ inflight: 10, limit: 10 })
    shedder.close()
  })

  it('a closed shedder sheds nothing, its adaptive limit full or not', () => {
    const shedder = createShedder({
      adaptive: { min: 2, max: 2 },
      [SHED_HOOKS]: { manual: true, now: () => 0, signals: { read: () => quiet, close() {} } },
    } as ShedderOptions)
    const held = [shedder.admit('normal'), shedder.admit('normal')]
    expect(shedder.admit('normal')).toMatchObject({ admitted: false, signal: 'inflight' })
    shedder.close()
    // (before: still refused with signal 'inflight', and counted as shed)
    const after = Array.from({ length: 3 }, () => shedder.admit('low'))
    expect(after.every((a) => a.admitted)).toBe(true)
    expect(shedder.state().shed).toBe(1)
    for (const a of [...held, ...after]) if (a.admitted) a.done()
    expect(shedder.state().inflight).toBe(0)
  })

  it("adaptive.name is a non-empty string, as a shedder's name is (before: 5 or '' taken)", () => {
    for (const name of [5, ''])
      expect(() => createAdaptiveLimit({ name } as never)).toThrow(
        expect.objectContaining({ code: 'ERR_LIMITER_OPTION', option: 'adaptive.name' }),
      )
    expect(createAdaptiveLimit({ name: 'api' }).state().name).toBe('api')
  })

  it('is a share in [0, 0.99]', () => {
    expect(() => createAdaptiveLimit({ reserve: 1 })).toThrow(RangeError)
    expect(() => createAdaptiveLimit({ reserve: -0.1 })).toThrow(
      expect.objectContaining({ code: 'ERR_LIMITER_OPTION' }),
    )
    expect(() => createAdaptiveLimit({ reserve: '0.2' as never })).toThrow(TypeError)
  })
})

const quiet = { elu: 0.1, delayMs: 1, heapUsedBytes: 0 }

it('in shadow mode, what the adaptive limit would refuse is admitted and counted in it', () => {
  const shedder = createShedder({
    mode: 'shadow',
    adaptive: { min: 2, max: 2 },
    [SHED_HOOKS]: { manual: true, now: () => 0, signals: { read: () => quiet, close() {} } },
  } as ShedderOptions)
  const all = [1, 2, 3].map(() => shedder.admit('low'))
  expect(all.every((a) => a.admitted)).toBe(true)
  expect(shedder.state()).toMatchObject({ shed: 1, inflight: 3, adaptive: { inflight: 3 } })
  for (const a of all) if (a.admitted) a.done()
  expect(shedder.state().adaptive?.inflight).toBe(0)
})
