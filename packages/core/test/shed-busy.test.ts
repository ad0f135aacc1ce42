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
