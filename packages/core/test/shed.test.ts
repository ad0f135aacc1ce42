// The process shedder, driven by injected signal readings and manual intervals.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { describe, expect, it } from 'vitest'
import { SHED_HOOKS } from '../src/shed/hooks.js'
import {
  createShedder,
  type Priority,
  priorityRank,
  SHED_CHANNEL,
  type Shedder,
  type ShedderOptions,
  type ShedEvent,
} from '../src/shed/index.js'
import { tickShedder } from '../src/shed/shedder.js'
import type { ProcessReading } from '../src/shed/signals.js'

const quiet: ProcessReading = { elu: 0.2, delayMs: 5, heapUsedBytes: 1e8 }

// A shedder whose signals and clock the test sets, and whose intervals pass on tick().
function fixture(options: ShedderOptions = {}) {
  const world = { now: 0, reading: quiet, closed: false }
  const shedder = createShedder({
    ...options,
    [SHED_HOOKS]: {
      manual: true,
      now: () => world.now,
      signals: {
        read: () => world.reading,
        close: () => {
          world.closed = true
        },
      },
    },
  } as ShedderOptions)
  const tick = (reading: Partial<ProcessReading> = {}, times = 1) => {
    world.reading = { ...quiet, ...reading }
    for (let i = 0; i < times; i++) {
      world.now += 1000
      tickShedder(shedder)
    }
  }
  return { shedder, world, tick }
}

const CLASSES: readonly Priority[] = ['critical', 'high', 'normal', 'low']

function admittedOf(shedder: Shedder, classes = CLASSES): Priority[] {
  return classes.filter((p) => {
    const a = shedder.admit(p)
    if (a.admitted) a.done()
    return a.admitted
  })
}

describe('priorities', () => {
  it('ranks the named classes and whole numbers, and refuses anything else', () => {
    expect(CLASSES.map((p) => priorityRank(p))).toEqual([0, 1, 2, 3])
    expect(priorityRank(undefined)).toBe(2)
    expect(priorityRank(7)).toBe(7)
    expect(() => priorityRank('urgent' as never)).toThrow(TypeError)
    expect(() => priorityRank('toString' as never)).toThrow(TypeError)
    expect(() => priorityRank(-1)).toThrow(RangeError)
    expect(() => priorityRank(1.5)).toThrow(expect.objectContaining({ code: 'ERR_LIMITER_OPTION' }))
  })
})

describe('createShedder', () => {
  it('sheds the lowest class first, then one more per two intervals over in a row', () => {
    const { shedder, tick } = fixture()
    expect(admittedOf(shedder)).toEqual(CLASSES)
    tick({ elu: 0.95 })
    expect(admittedOf(shedder)).toEqual(['critical', 'high', 'normal'])
    const refused = shedder.admit('low')
    expect(refused).toEqual({ admitted: false, signal: 'elu', priority: 'low', retryAfterMs: 5000 })
    // one interval over after a rise may be the backlog draining: it holds
    tick({ delayMs: 450 })
    expect(admittedOf(shedder)).toEqual(['critical', 'high', 'normal'])
    tick({ delayMs: 450 })
    expect(admittedOf(shedder)).toEqual(['critical', 'high'])
    expect(shedder.admit('normal')).toMatchObject({ signal: 'delay', retryAfterMs: 5000 })
    // low comes back only after normal: two quiet periods
    expect(shedder.admit('low')).toMatchObject({ retryAfterMs: 10_000 })
    tick({ elu: 1 }, 2)
    expect(admittedOf(shedder)).toEqual(['critical'])
    tick({ elu: 1 }, 20)
    expect(admittedOf(shedder)).toEqual(['critical'])
    expect(shedder.state()).toMatchObject({
      shedding: ['high', 'normal', 'low'],
      over: 'elu',
      level: 3,
    })
  })

  it('admits a class again only after `recovery` quiet intervals, one class per period', () => {
    const { shedder, tick } = fixture({ recovery: 3 })
    admittedOf(shedder)
    tick({ elu: 0.99 }, 3)
    expect(admittedOf(shedder)).toEqual(['critical', 'high'])
    tick({}, 2)
    expect(admittedOf(shedder)).toEqual(['critical', 'high'])
    expect(shedder.state().quietIntervals).toBe(2)
    tick()
    expect(admittedOf(shedder)).toEqual(['critical', 'high', 'normal'])
    tick({}, 2)
    expect(admittedOf(shedder)).toEqual(['critical', 'high', 'normal'])
    tick()
    expect(admittedOf(shedder)).toEqual(CLASSES)
    expect(shedder.state().shedding).toEqual([])
  })

  it('neither ratchets nor flaps while a signal hovers around its threshold', () => {
    const { shedder, tick } = fixture({ recovery: 3, thresholds: { elu: 0.8 } })
    admittedOf(shedder)
    const admitted: number[] = []
    for (let i = 0; i < 40; i++) {
      tick({ elu: i % 2 === 0 ? 0.81 : 0.79 })
      admitted.push(admittedOf(shedder).length)
    }
    // the first interval over sheds low; after that, over every other interval sheds nothing
    // more, and 0.79 is in the recovery band (over 0.72): low stays shed, the rest stay in
    expect(admitted).toEqual(Array(40).fill(3))
    // a quiet stretch under the band brings low back
    tick({ elu: 0.7 }, 3)
    expect(admittedOf(shedder)).toEqual(CLASSES)
  })

  it('with `steps`, settles at the share of a class the service can take, and holds it', () => {
    // a simulated service: each class's admitted share of its demand adds to the event loop's
    // utilization, read one interval late (what was queued drains in the next one)
    const { shedder, tick } = fixture({ steps: 4, recovery: 3 })
    const demand: Record<string, number> = { critical: 0.2, high: 0, normal: 0, low: 0.9 }
    let lastElu = 0.2
    const levels: number[] = []
    for (let i = 0; i < 60; i++) {
      tick({ elu: Math.min(1, lastElu) })
      let elu = 0
      for (const p of CLASSES) {
        let admitted = 0
        for (let r = 0; r < 100; r++) {
          const a = shedder.admit(p)
          if (a.admitted) {
            admitted++
            a.done()
          }
        }
        elu += ((demand[p] as number) * admitted) / 100
      }
      lastElu = elu
      levels.push(shedder.state().level)
    }
    // 0.25 of low shed: 0.2 + 0.9 * 0.75 = 0.875, in the band (0.81 to 0.9): it holds there,
    // where whole classes would flap between 1.1 and 0.2
    expect(levels.slice(20)).toEqual(Array(40).fill(0.25))
    expect(shedder.admit('critical').admitted).toBe(true)
  })

  it('with `steps`, fine-tunes near the level the service can take instead of swinging a unit', () => {
    // 20% critical at four times capacity: critical alone is 0.8 of the loop, low 3.2, so a
    // tenth of low is 0.32. Whole units swing between all of low shed (0.8, under the band
    // 0.931-0.98) and a tenth admitted (1.12, over); a finer step lands in the band and holds.
    const { shedder, tick } = fixture({
      steps: 10,
      recovery: 3,
      recoveryBand: 0.05,
      thresholds: { elu: 0.98 },
    })
    const demand: Record<string, number> = { critical: 0.8, low: 3.2 }
    let lastElu = 0.2
    const utilization: number[] = []
    const levels = new Set<number>()
    for (let i = 0; i < 120; i++) {
      tick({ elu: Math.min(1, lastElu) })
      let elu = 0
      for (const p of ['critical', 'low'] as const) {
        let admitted = 0
        for (let r = 0; r < 160; r++) {
          const a = shedder.admit(p)
          if (a.admitted) {
            admitted++
            a.done()
          }
        }
        elu += ((demand[p] as number) * admitted) / 160
      }
      lastElu = elu
      if (i >= 60) {
        utilization.push(Math.min(1, elu))
        levels.add(shedder.state().level)
      }
    }
    // the last 60 intervals: one level, in the band (the old unit-wide swing averaged 0.9)
    expect([...levels]).toHaveLength(1)
    const mean = utilization.reduce((a, b) => a + b, 0) / utilization.length
    expect(mean).toBeGreaterThan(0.931)
    expect(mean).toBeLessThanOrEqual(0.98)
    expect(shedder.admit('critical').admitted).toBe(true)
  })

  it('halves the step where the direction turns, and doubles it back while it does not', () => {
    const { shedder, tick } = fixture({ steps: 10, recovery: 1, recoveryBand: 0.05 })
    const mix: Priority[] = ['critical', 'low']
    admittedOf(shedder, mix)
    // to all of low, a unit back (over), half of it again (under), a quarter back: 0.975
    tick({ elu: 1, delayMs: 1000 })
    tick({ elu: 0.5 })
    expect(shedder.state().level).toBe(0.9)
    tick({ elu: 1 }, 2)
    expect(shedder.state().level).toBe(0.95)
    tick({ elu: 0.5 })
    expect(shedder.state().level).toBe(0.925)
    // in the band (0.855 to 0.9) it holds
    tick({ elu: 0.88 }, 5)
    expect(shedder.state().level).toBe(0.925)
    // the load goes: falls in a row double, up to a unit each
    const levels: number[] = []
    for (let i = 0; i < 5; i++) {
      tick({ elu: 0.2 })
      levels.push(shedder.state().level)
    }
    expect(levels.map((l) => Math.round(l * 1e4) / 1e4)).toEqual([
      0.875, 0.775, 0.675, 0.575, 0.475,
    ])
    // it comes back: a rise right after a fall takes back half of it, then the other half,
    // then rises double (each after two intervals over)
    const rises: number[] = []
    for (let i = 0; i < 4; i++) {
      tick({ elu: 1 }, 2)
      rises.push(Math.round(shedder.state().level * 1e4) / 1e4)
    }
    expect(rises).toEqual([0.525, 0.575, 0.675, 0.875])
  })

  it('with `steps`, rises a step, then twice as much; a signal far over takes the class', () => {
    const { shedder, tick } = fixture({ steps: 10 })
    admittedOf(shedder)
    tick({ elu: 0.95 })
    expect(shedder.state().level).toBe(0.1)
    // one unit, then two, then four
    tick({ elu: 0.95 }, 2)
    expect(shedder.state().level).toBeCloseTo(0.3)
    tick({ elu: 0.95 })
    expect(shedder.state().level).toBeCloseTo(0.3)
    tick({ elu: 0.95 })
    expect(shedder.state().level).toBeCloseTo(0.7)
    // p99 delay over twice its threshold (200 ms): what queues is growing, all of low goes
    tick({ delayMs: 450 }, 2)
    expect(shedder.state().level).toBe(1)
    expect(admittedOf(shedder)).toEqual(['critical', 'high', 'normal'])
    // evenly spread: a tenth shed is every tenth request
    tick({}, 5)
    expect(shedder.state().level).toBeCloseTo(0.9)
    const low = Array.from({ length: 20 }, () => shedder.admit('low').admitted)
    expect(low.filter((a) => !a)).toHaveLength(18)
  })

  it('steps only through classes with traffic: critical and low alone never shed more than low', () => {
    // Stripe's mix: critical and low, nothing in between. Shedding high or normal would relieve
    // nothing, and walking back down through them would keep low shed for nothing.
    const { shedder, tick } = fixture({ steps: 10, recovery: 2 })
    const mix: Priority[] = ['critical', 'low']
    for (let i = 0; i < 30; i++) {
      admittedOf(shedder, mix)
      tick({ elu: 1, delayMs: 1000 })
    }
    expect(shedder.state()).toMatchObject({ level: 1, shedding: ['low'] })
    expect(admittedOf(shedder, mix)).toEqual(['critical'])
    // one unit per 2 quiet intervals: a tenth of low back after 2, all of it after 20
    const lowAdmitted = () =>
      Array.from({ length: 10 }, () => shedder.admit('low')).filter((a) => a.admitted).length
    tick({}, 2)
    expect(lowAdmitted()).toBe(1)
    for (let i = 0; i < 18; i++) {
      admittedOf(shedder, mix)
      tick()
    }
    expect(shedder.state().level).toBe(0)
    expect(lowAdmitted()).toBe(10)
  })

  it('forgets an admitted class that stops asking, and keeps a shed one until it is walked back', () => {
    const { shedder, tick } = fixture({ recovery: 2 })
    admittedOf(shedder, ['normal', 'low'])
    tick({ elu: 1 })
    expect(shedder.state().shedding).toEqual(['low'])
    // low keeps asking and is refused; normal asks nothing for 10 intervals (2 x recovery, at
    // least 10) while the signal holds in the recovery band: normal leaves the ladder, so
    // pressure after that cannot shed it for nothing
    for (let i = 0; i < 10; i++) {
      admittedOf(shedder, ['low'])
      tick({ elu: 0.85 })
    }
    for (let i = 0; i < 6; i++) {
      admittedOf(shedder, ['low'])
      tick({ elu: 1 })
    }
    expect(shedder.state()).toMatchObject({ level: 1, shedding: ['low'] })
    // back, it starts admitted, above low
    expect(admittedOf(shedder, ['normal', 'low'])).toEqual(['normal'])
    // a shed class that stops asking (its clients wait out Retry-After) stays until walked back
    tick({}, 30)
    expect(shedder.state()).toMatchObject({ level: 0, shedding: [] })
    expect(admittedOf(shedder, ['normal', 'low'])).toEqual(['normal', 'low'])
  })

  it('never sheds critical (rank 0), and sheds numeric ranks below low first', () => {
    const { shedder, tick } = fixture()
    const all: Priority[] = [0, 'critical', 'high', 'normal', 'low', 9]
    expect(admittedOf(shedder, all)).toEqual(all)
    tick({ heapUsedBytes: 1e12, elu: 1, delayMs: 10_000 })
    expect(admittedOf(shedder, all)).toEqual([0, 'critical', 'high', 'normal', 'low'])
    expect(shedder.admit(9)).toMatchObject({ admitted: false, priority: 9 })
    tick({ elu: 1 }, 50)
    expect(admittedOf(shedder, all)).toEqual([0, 'critical'])
  })

  it('reads in-flight, queue time from its own entry stamp, and heap, when given thresholds', () => {
    const inflight = fixture({ thresholds: { elu: false, delay: false, inflight: 2 } })
    const held = [1, 2, 3].map(() => inflight.shedder.admit('critical'))
    admittedOf(inflight.shedder)
    inflight.tick({ elu: 1, delayMs: 10_000 })
    expect(inflight.shedder.admit('low')).toMatchObject({ signal: 'inflight' })
    expect(inflight.shedder.state().reading).toMatchObject({ inflight: 3 })
    for (const a of held) if (a.admitted) a.done()
    expect(inflight.shedder.state().inflight).toBe(0)

    const queue = fixture({ thresholds: { queue: '2s' } })
    const slow = queue.shedder.admit()
    queue.tick() // 1 s in flight
    expect(queue.shedder.state().over).toBe(null)
    queue.tick({}, 2) // 3 s in flight
    expect(queue.shedder.admit('low')).toMatchObject({ signal: 'queue' })
    expect(queue.shedder.state().reading?.queueMs).toBe(3000)
    if (slow.admitted) slow.done()

    const heap = fixture({ thresholds: { heap: 2e9 } })
    admittedOf(heap.shedder)
    heap.tick({ heapUsedBytes: 3e9 })
    expect(heap.shedder.admit('low')).toMatchObject({ signal: 'heap' })
  })

  it('in shadow mode admits what it would shed, counts it and publishes it', () => {
    const events: ShedEvent[] = []
    const listen = (m: unknown) => events.push(m as ShedEvent)
    subscribe(SHED_CHANNEL, listen)
    try {
      const shadow = fixture({ mode: 'shadow', name: 'api' })
      admittedOf(shadow.shedder)
      shadow.tick({ elu: 1 })
      expect(admittedOf(shadow.shedder)).toEqual(CLASSES)
      expect(shadow.shedder.state()).toMatchObject({ shed: 1, mode: 'shadow', shedding: ['low'] })
      const enforce = fixture()
      admittedOf(enforce.shedder)
      enforce.tick({ delayMs: 1000 })
      enforce.shedder.admit('low')
      expect(events).toEqual([
        { shedder: 'api', priority: 'low', signal: 'elu', shadow: true },
        { shedder: 'shedder', priority: 'low', signal: 'delay', shadow: false },
      ])
    } finally {
      unsubscribe(SHED_CHANNEL, listen)
    }
  })

  it('done() ends a request once; close() stops reading and sheds nothing', () => {
    const { shedder, tick, world } = fixture()
    const a = shedder.admit()
    if (!a.admitted) throw new Error('admitted')
    expect(shedder.state().inflight).toBe(1)
    a.done()
    a.done()
    expect(shedder.state().inflight).toBe(0)
    tick({ elu: 1 }, 3)
    shedder.close()
    shedder.close()
    expect(world.closed).toBe(true)
    expect(admittedOf(shedder)).toEqual(CLASSES)
  })

  it('refuses bad options at construction, naming the option', () => {
    const bad: [ShedderOptions, string][] = [
      [{ interval: 0 }, 'interval'],
      [{ recovery: 0 }, 'recovery'],
      [{ steps: 0.5 }, 'steps'],
      [{ steps: 101 }, 'steps'],
      [{ recoveryBand: 1 }, 'recoveryBand'],
      [{ thresholds: { elu: 2 } }, 'thresholds.elu'],
      [{ thresholds: { delay: 'soon' } }, 'thresholds.delay'],
      [{ thresholds: { inflight: 1.5 } }, 'thresholds.inflight'],
      [{ mode: 'off' as never }, 'mode'],
      [{ adaptive: { min: 10, max: 5 } }, 'adaptive.max'],
    ]
    for (const [options, option] of bad)
      expect(() => createShedder(options)).toThrow(
        expect.objectContaining({ code: 'ERR_LIMITER_OPTION', option }),
      )
    const { shedder } = fixture()
    expect(() => shedder.admit('urgent' as never)).toThrow(TypeError)
  })
})
