// observeDecisions, the inspector's internal hook: a limiter tells its observers each decision
// directly (key, cost, the Decision, its time), beside limiter:decision's subscribers, and stops
// once they unregister. On MemoryStore and on a real Redis.
import { channel, subscribe, unsubscribe } from 'node:diagnostics_channel'
import { afterEach, describe, expect, it } from 'vitest'
import {
  createLimiter,
  DECISION_CHANNEL,
  type Decision,
  type DecisionEvent,
  type Limiter,
  observeDecisions,
  RedisStore,
} from '../src/index.js'
import { withClock } from '../src/testing/index.js'
import { useRedis } from './setup/redis.js'

const redis = useRedis()

type Told = [key: string, cost: number, decision: Decision, atMs: number]

// What `limiter`'s observer is told, until the test ends.
const stops: Array<() => void> = []
function observe(limiter: Limiter): Told[] {
  const told: Told[] = []
  const stop = observeDecisions(limiter, (...args) => told.push(args))
  if (stop === undefined) throw new Error('not observable')
  stops.push(stop)
  return told
}
afterEach(() => {
  for (const stop of stops.splice(0)) stop()
})

describe('observeDecisions', () => {
  it('tells each decision of a MemoryStore limiter, peeks included, with its time', async () => {
    let nowMs = 1_700_000_000_250
    const limiter = createLimiter(withClock({ limit: 2, window: '1m' }, () => nowMs))
    const told = observe(limiter)
    const decisions = [await limiter.consume('a'), await limiter.consume('a', 1)]
    nowMs += 1000
    decisions.push(await limiter.consume('a'), await limiter.peek('b'))
    decisions.push(await limiter.consume('c', 2, { priority: 'critical' }))
    expect(told.map(([key, cost, d, atMs]) => [key, cost, d.allowed, atMs])).toEqual([
      ['a', 1, true, 1_700_000_000_250],
      ['a', 1, true, 1_700_000_000_250],
      ['a', 1, false, 1_700_000_001_250],
      ['b', 0, true, 1_700_000_001_250],
      ['c', 2, true, 1_700_000_001_250],
    ])
    told.forEach(([, , d], i) => {
      expect(d).toBe(decisions[i])
    })
    // nothing subscribed to the channel for it
    expect(channel(DECISION_CHANNEL).hasSubscribers).toBe(false)
  })

  it('tells a Redis decision once the store answered, and a refusal from the cache', async () => {
    const nowMs = 1_700_000_000_000
    const limiter = createLimiter(
      withClock(
        {
          limit: 1,
          window: '1m',
          name: `observed-${process.pid}`,
          store: new RedisStore({ client: redis.client }),
        },
        () => nowMs,
      ),
    )
    const told = observe(limiter)
    await limiter.consume('k')
    await limiter.consume('k')
    await limiter.consume('k')
    expect(told.map(([key, cost, d, atMs]) => [key, cost, d.allowed, d.source, atMs])).toEqual([
      ['k', 1, true, 'store', nowMs],
      ['k', 1, false, 'store', nowMs],
      ['k', 1, false, 'blocked-cache', nowMs],
    ])
    await limiter.reset('k')
  })

  it('serves the channel too, the same decisions, while both listen', async () => {
    const limiter = createLimiter({ limit: 1, window: '1m', mode: 'shadow' })
    const told = observe(limiter)
    const events: DecisionEvent[] = []
    const listener = (message: unknown) => events.push(message as DecisionEvent)
    subscribe(DECISION_CHANNEL, listener)
    try {
      await limiter.consume('x')
      await limiter.consume('x')
    } finally {
      unsubscribe(DECISION_CHANNEL, listener)
    }
    await limiter.consume('x') // the observer's alone
    const mine = events.filter((e) => e.limiter === limiter)
    expect(mine.map((e) => [e.key, e.cost, e.decision, e.atMs, e.shadow])).toEqual(
      told.slice(0, 2).map(([key, cost, d, atMs]) => [key, cost, d, atMs, true]),
    )
    expect(told).toHaveLength(3)
  })

  it('tells every observer; one unregistered hears no more, the others still do', async () => {
    const limiter = createLimiter({ limit: 5, window: '1m' })
    const first: string[] = []
    const second: string[] = []
    const stopFirst = observeDecisions(limiter, (key) => first.push(key))
    const stopSecond = observeDecisions(limiter, (key) => second.push(key))
    await limiter.consume('one')
    stopFirst?.()
    stopFirst?.() // again: nothing more
    await limiter.consume('two')
    stopSecond?.()
    await limiter.consume('three')
    expect([first, second]).toEqual([['one'], ['one', 'two']])
  })

  it('tells only the observed limiter, and answers undefined for a limiter it cannot watch', async () => {
    const watched = createLimiter({ limit: 5, window: '1m' })
    const other = createLimiter({ limit: 5, window: '1m' })
    const told = observe(watched)
    await other.consume('k')
    expect(told).toEqual([])
    // a Limiter not made by createLimiter: subscribe to limiter:decision for it instead
    const handMade = Object.fromEntries(Object.entries(watched)) as unknown as Limiter
    expect(observeDecisions(handMade, () => {})).toBeUndefined()
  })
})
