// maxDelay over HTTP: clients that hang up while waiting for their slot. Each hang-up refunds its
// reservation; a refund gives the slot back only if nobody waits behind it, so the next request
// is never given a slot a waiting client still holds (issue 24, point 3).
import { createLimiter, type Decision, MemoryStore } from '@limiter/core'
import { expect, it } from 'vitest'
import { countGiveBacks, until } from '../../../test-support/adapter-helpers.js'
import { EXPRESS, harness } from './helpers.js'

// Peeks until the queue is full: every request of the burst has its decision.
async function full(peek: () => Promise<Decision>): Promise<void> {
  const deadline = Date.now() + 10_000
  while ((await peek()).allowed) {
    if (Date.now() > deadline) throw new Error('the burst was not decided in time')
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

it.each(EXPRESS)(
  '$version: waiting clients that hang up free no slot another still waits for',
  async ({ express }) => {
    const store = new MemoryStore()
    const counts = countGiveBacks(store)
    const policy = {
      algorithm: 'gcra',
      // one slot a second, so the burst is decided long before its first reservations come due,
      // however busy the machine
      limit: 10,
      window: '10s',
      burst: 1,
      maxDelay: '10s',
      name: `hangups${express === EXPRESS[0].express ? 4 : 5}`,
      prefix: 'rr:',
      store,
    } as const
    const server = await harness(express).listen({ ...policy, key: () => 'k' })
    // the app's limiter, seen from outside: the same definition on the same store
    const limiter = createLimiter(policy)
    try {
      // 11 at once: one goes now, the others wait for slots 1 s to 10 s ahead
      const controllers = Array.from({ length: 11 }, () => new AbortController())
      const replies = controllers.map((c) =>
        fetch(`${server.url}/`, { signal: c.signal }).then(
          (res) => res.status,
          () => 'gone',
        ),
      )
      await full(() => limiter.peek('k'))
      // all but the first and the last hang up: 9 refunds
      for (const c of controllers.slice(1, 10)) c.abort()
      await until(() => counts.refunds === 9)
      // the last still waits for its slot, about 10 s after the start: the next request could have
      // only the slot after it (11 s, past maxDelay), not one of those given back (before the
      // fix: a wait of about 2 s)
      const next = await limiter.peek('k')
      expect(next.allowed ? next.delayMs : next.retryAfterMs).toBeGreaterThan(5000)
      ;(controllers[10] as AbortController).abort()
      expect(await Promise.all(replies)).toEqual([200, ...Array(10).fill('gone')])
      await until(() => counts.refunds === 10)
      expect(server.handlerStarts()).toHaveLength(1)
    } finally {
      await server.close()
    }
  },
)
