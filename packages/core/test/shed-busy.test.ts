// The process shedder on the real event loop: a loop blocked ~100 ms at a time.
import { setTimeout as sleep } from 'node:timers/promises'
import { expect, it } from 'vitest'
import { createShedder, type ShedRefused } from '../src/shed/index.js'

function block(ms: number): void {
  const start = performance.now()
  while (performance.now() - start < ms) {}
}

it('sheds low under a busy event loop, and never critical', async () => {
  const shedder = createShedder({ interval: '100ms', recovery: 1000 })
  try {
    let refused: ShedRefused | undefined
    let criticalRefused = 0
    // at most 100 busy stretches: each interval that ends in one is ~100% utilized, so low is
    // shed after the first interval that ends; the bound leaves a loaded machine ample slack
    for (let i = 0; i < 100 && refused === undefined; i++) {
      block(100)
      await sleep(1)
      const critical = shedder.admit('critical')
      if (critical.admitted) critical.done()
      else criticalRefused++
      const low = shedder.admit('low')
      if (low.admitted) low.done()
      else refused = low
    }
    expect(refused).toMatchObject({ admitted: false, priority: 'low' })
    expect(['elu', 'delay']).toContain(refused?.signal)
    expect(criticalRefused).toBe(0)
    // still busy: more classes go, critical stays
    for (let i = 0; i < 20; i++) {
      block(100)
      await sleep(1)
      const critical = shedder.admit('critical')
      expect(critical.admitted).toBe(true)
      if (critical.admitted) critical.done()
    }
    expect(shedder.state().shedding).toContain('low')
  } finally {
    shedder.close()
  }
})

// Requests of a synthetic service every 10 ms: one critical (1 ms of CPU) and four low (2.5 ms
// each) when admitted: 110% of the loop with everything admitted. Whole classes can only flap
// low in and out (10% of the loop without it, 110% with it); in steps, the shedder keeps the
// share of low the loop can take.
it('on a busy loop, keeps a steady share of low instead of flapping it in and out', async () => {
  const shedder = createShedder({
    interval: '100ms',
    recovery: 3,
    steps: 4,
    recoveryBand: 0.3,
    thresholds: { elu: 0.9, delay: false },
  })
  // each change of what is shed (the classes, and how much of them)
  const changes: string[] = []
  let low = 0
  let lowAdmitted = 0
  let criticalRefused = 0
  try {
    const start = performance.now()
    let next = start
    // 60 intervals; whatever the machine's load, a late tick runs one round, never a backlog
    while (performance.now() - start < 6000) {
      const c = shedder.admit('critical')
      if (c.admitted) {
        block(1)
        c.done()
      } else criticalRefused++
      for (let i = 0; i < 4; i++) {
        const a = shedder.admit('low')
        low++
        if (a.admitted) {
          lowAdmitted++
          block(2.5)
          a.done()
        }
      }
      next = Math.max(next + 10, performance.now())
      await sleep(Math.max(0, next - performance.now()))
      const { shedding, level } = shedder.state()
      const now = `${shedding.join()} ${level}`
      if (changes.at(-1) !== now) changes.push(now)
    }
  } finally {
    shedder.close()
  }
  expect(criticalRefused).toBe(0)
  // some low shed, and part of it served all along (a loaded machine slows the loop: less)
  expect(lowAdmitted).toBeLessThan(low)
  expect(lowAdmitted).toBeGreaterThan(low * 0.25)
  // whole classes flap low in and out about every fourth interval (~15 changes in 60
  // intervals); the steps settle after a few (a loaded machine may nudge them a few more)
  expect(changes.length).toBeLessThanOrEqual(8)
})

// Four times what the loop can take, 20% of it critical: every 10 ms one critical request (7 ms
// of CPU) and ten low ones (3 ms each) when admitted. A tenth of low is 30% of the loop: in
// whole units the ladder swings between all of low shed (70%, under the band) and a tenth
// admitted (100%, over), about every fifth interval; finer steps where it turns find the share
// in the band (a twentieth to a sixteenth of low) and hold it.
it('at four times capacity, settles on a fine share of low instead of swinging a unit', async () => {
  const shedder = createShedder({
    interval: '100ms',
    recovery: 3,
    steps: 10,
    recoveryBand: 0.05,
    thresholds: { elu: 0.9, delay: false },
  })
  const levels: number[] = []
  let criticalRefused = 0
  try {
    const start = performance.now()
    let next = start
    let interval = -1
    while (performance.now() - start < 8000) {
      const c = shedder.admit('critical')
      if (c.admitted) {
        block(7)
        c.done()
      } else criticalRefused++
      for (let i = 0; i < 10; i++) {
        const a = shedder.admit('low')
        if (a.admitted) {
          block(3)
          a.done()
        }
      }
      next = Math.max(next + 10, performance.now())
      await sleep(Math.max(0, next - performance.now()))
      // one sample per interval
      const now = Math.floor((performance.now() - start) / 100)
      if (now !== interval) {
        interval = now
        levels.push(shedder.state().level)
      }
    }
  } finally {
    shedder.close()
  }
  expect(criticalRefused).toBe(0)
  // the last 40 intervals: the unit-wide swing moves a whole step (a tenth) 8-12 times; fine
  // steps move by a fraction of one, a few times (a loaded machine may add a few)
  const last = levels.slice(-40)
  const moves = last.slice(1).map((level, i) => Math.abs(level - (last[i] as number)))
  expect(moves.filter((m) => m > 0).length).toBeLessThanOrEqual(8)
  expect(moves.filter((m) => m >= 0.1 - 1e-9).length).toBeLessThanOrEqual(1)
  expect(Math.min(...last)).toBeGreaterThan(0.8)
})
