// The guard around remote store calls keeps only what is in flight: a settled decision is not
// held until its deadline timer fires.

import v8 from 'node:v8'
import vm from 'node:vm'
import { describe, expect, it } from 'vitest'
import { createLimiter, type Store, type StoreDecision } from '../src/index.js'

v8.setFlagsFromString('--expose-gc')
const gc = vm.runInNewContext('gc') as () => void

/** A remote store (not `local`) that answers every consume at once. */
const instant: Store = {
  consume: (): Promise<StoreDecision> =>
    Promise.resolve({ allowed: true, remaining: 9, resetMs: 1000, retryAfterMs: 0 }),
  refund: () => Promise.resolve(),
  reset: () => Promise.resolve(),
}

const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0))

describe('guard', () => {
  it('lets settled decisions go before their deadline (a long timeout holds nothing)', async () => {
    const limiter = createLimiter({ limit: 10, window: '1s', store: instant, timeout: '1m' })
    const refs: WeakRef<object>[] = []
    for (let i = 0; i < 200; i++) refs.push(new WeakRef(await limiter.consume(`k${i}`)))
    await nextTask()
    gc()
    await nextTask()
    gc()
    const alive = refs.filter((ref) => ref.deref() !== undefined).length
    // Before the fix every one of them stayed reachable from the deadline queue for a minute.
    expect(alive).toBeLessThan(5)
  })
})
