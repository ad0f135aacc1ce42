// What the recorder takes from the channels: fail-open decisions, store errors and circuits from
// a failing store, shadow refusals, and per-policy refusals of a several-policy limiter.
import { channel, subscribe, unsubscribe } from 'node:diagnostics_channel'
import { createLimiter, type DecisionEvent, MemoryStore, type Store } from '@limiter/core'
import { describe, expect, it } from 'vitest'
import { inspector, type PolicyState } from '../src/index.js'
import { clearOfMinuteEdge } from './minute-edge.js'

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0)
/** Decisions counted in a series (rates are per second over 5 s points). */
const counted = (policy: PolicyState | undefined, series: keyof PolicyState['rates']) =>
  Math.round(sum(policy?.rates[series] ?? []) * 5)

describe('the recorder', () => {
  it('counts store errors and fail-open decisions, and shows the circuit open', async () => {
    const down: Store = {
      consume: () => Promise.reject(new Error('store down')),
      refund: () => Promise.resolve(),
      reset: () => Promise.resolve(),
    }
    const limiter = createLimiter({
      name: 'failing',
      limit: 5,
      window: '1m',
      store: down,
      failureMode: 'open',
      circuitBreaker: { failureThreshold: 2, coolDown: '1m' },
      onError: () => {},
    })
    const page = inspector({ limiters: [limiter], authorize: () => true })
    for (let i = 0; i < 6; i++) expect((await limiter.consume('k')).source).toBe('fail-open')
    const state = await page.state()
    const policy = state.policies[0]
    expect(counted(policy, 'failOpen')).toBe(6)
    expect(counted(policy, 'storeErrors')).toBe(2) // then the circuit skips the store
    expect(counted(policy, 'allowed')).toBe(0)
    expect(state.circuits).toEqual([
      { limiter: 'failing', domain: '', state: 'open', sinceMs: expect.any(Number) },
    ])
    page.close()
  })

  it('counts a shadow limiter refusals as shadow, and lists their keys', async () => {
    await clearOfMinuteEdge()
    const limiter = createLimiter({ name: 'shadowed', limit: 1, window: '1m', mode: 'shadow' })
    const page = inspector({ limiters: [limiter], authorize: () => true, maskKey: false })
    for (let i = 0; i < 4; i++) await limiter.consume('would-be-limited')
    const policy = (await page.state()).policies[0]
    expect([
      counted(policy, 'allowed'),
      counted(policy, 'shadow'),
      counted(policy, 'refused'),
    ]).toEqual([1, 3, 0])
    expect(policy?.top['1m']).toEqual([{ key: 'would-be-limited', count: 3, error: 0 }])
    page.close()
  })

  it('holds a refused key of any length in at most ~200 bytes, distinct keys distinct', async () => {
    await clearOfMinuteEdge()
    const limiter = createLimiter({ name: 'long-keys', limit: 1, window: '1m' })
    const page = inspector({ limiters: [limiter], authorize: () => true, maskKey: false })
    const long = (c: string) => c.repeat(64 * 1024)
    for (const key of [long('a'), long('b'), 'short'])
      for (let i = 0; i < 3; i++) await limiter.consume(key)
    const top = (await page.state()).policies[0]?.top['1m'] ?? []
    // (before: each summary entry kept the 64 kB key, in memory and in Redis)
    expect(top.map((t) => t.count)).toEqual([2, 2, 2])
    expect(new Set(top.map((t) => t.key)).size).toBe(3)
    expect(top.every((t) => Buffer.byteLength(t.key) <= 200)).toBe(true)
    expect(top.map((t) => t.key)).toContain('short')
    page.close()
  })

  it('charges a refusal to the policies that refused it, and ignores peeks', async () => {
    const limiter = createLimiter({
      name: 'two-policies',
      limits: [
        { name: 'short', limit: 2, window: '10s', algorithm: 'fixed-window' },
        { name: 'long', limit: 100, window: '1h', algorithm: 'fixed-window' },
      ],
    })
    const page = inspector({ limiters: [limiter], authorize: () => true })
    for (let i = 0; i < 5; i++) await limiter.consume('user')
    for (let i = 0; i < 5; i++) await limiter.peek('user')
    const [short, long] = (await page.state()).policies
    expect([counted(short, 'allowed'), counted(short, 'refused')]).toEqual([2, 3])
    expect([counted(long, 'allowed'), counted(long, 'refused')]).toEqual([2, 0])
    expect(long?.top['15m']).toEqual([])
    page.close()
  })

  it('keeps listing a block while the store fails (as recorded), and drops it once lifted', async () => {
    const memory = new MemoryStore()
    let down = false
    const store: Store = {
      consume: (call) => (down ? Promise.reject(new Error('store down')) : memory.consume(call)),
      refund: (call) => memory.refund(call),
      reset: (call) => memory.reset(call),
      block: (call, ms) => memory.block(call, ms),
    }
    const limiter = createLimiter({
      name: 'flaky-blocks',
      limit: 5,
      window: '1m',
      store,
      failureMode: 'open',
      blockedCache: false, // every peek asks the store
      onError: () => {},
    })
    const page = inspector({ limiters: [limiter], authorize: () => true, maskKey: false })
    await limiter.block('held', '1h')
    const listed = async () => (await page.state()).blocks.map((b) => [b.key, b.unverified])
    expect(await listed()).toEqual([['held', undefined]])
    down = true // peek fails open: says nothing about the block
    expect(await listed()).toEqual([['held', true]])
    down = false
    await limiter.reset('held')
    expect(await listed()).toEqual([])
    page.close()
  })
})

describe('the recorder, per decision', () => {
  it('files a decision under the time it was made (the event’s atMs), reading no clock', async () => {
    const { withClock } = await import('@limiter/core/testing')
    const { Recorder } = await import('../src/recorder.js')
    const atMs = 1_700_000_123_456
    const limiter = createLimiter(withClock({ name: 'at-ms', limit: 1, window: '1m' }, () => atMs))
    let clockReads = 0
    const recorder = new Recorder([limiter], 8, () => {
      clockReads++
      return 0
    })
    recorder.start()
    try {
      await limiter.consume('k') // allowed
      await limiter.consume('k') // refused
    } finally {
      recorder.stop()
    }
    const record = recorder.policies.get(limiter)?.[0]
    const second = Math.floor(atMs / 1000)
    const slot = second % 900
    expect(record?.seconds[slot]).toBe(second)
    expect([record?.counts[slot * 5], record?.counts[slot * 5 + 1]]).toEqual([1, 1])
    expect(record?.summaryOf(Math.floor(atMs / 60_000))?.top()).toEqual([
      { key: 'k', count: 1, error: 0 },
    ])
    expect(clockReads).toBe(0)
  })
})

describe('the recorder, told directly by the limiters', () => {
  it('subscribes to no limiter:decision channel, and counts what the channel tells', async () => {
    const two = createLimiter({
      name: 'direct-two',
      limits: [
        { name: 'short', limit: 2, window: '10s', algorithm: 'fixed-window' },
        { name: 'long', limit: 3, window: '1h', algorithm: 'fixed-window' },
      ],
    })
    const shadow = createLimiter({ name: 'direct-shadow', limit: 1, window: '1m', mode: 'shadow' })
    const failing = createLimiter({
      name: 'direct-failing',
      limit: 5,
      window: '1m',
      store: {
        consume: () => Promise.reject(new Error('down')),
        refund: () => Promise.resolve(),
        reset: () => Promise.resolve(),
      },
      failureMode: 'open',
      onError: () => {},
    })
    const limiters = [two, shadow, failing]
    const page = inspector({ limiters, authorize: () => true })
    // the limiters tell the recorder directly: no event object, no channel
    expect(channel('limiter:decision').hasSubscribers).toBe(false)
    // what a subscriber counts from the same decisions, per policy, as the page's series
    const expected = new Map<string, Record<string, number>>()
    const listener = (message: unknown) => {
      const e = message as DecisionEvent
      if (e.cost === 0 || !limiters.includes(e.limiter)) return
      e.limiter.policies.forEach((p, i) => {
        const id = `${e.limiter.name}/${p.name}`
        const c = expected.get(id) ?? { allowed: 0, refused: 0, shadow: 0, failOpen: 0 }
        expected.set(id, c)
        if (e.decision.source === 'fail-open') c.failOpen = (c.failOpen ?? 0) + 1
        else if (e.decision.allowed) c.allowed = (c.allowed ?? 0) + 1
        else if (e.decision.policies[i]?.allowed === false)
          c[e.shadow ? 'shadow' : 'refused'] = (c[e.shadow ? 'shadow' : 'refused'] ?? 0) + 1
      })
    }
    subscribe('limiter:decision', listener)
    try {
      for (let i = 0; i < 5; i++) await two.consume(`user-${i % 2}`)
      await two.peek('user-0')
      for (let i = 0; i < 3; i++) await shadow.consume('s')
      for (let i = 0; i < 2; i++) await failing.consume('f')
    } finally {
      unsubscribe('limiter:decision', listener)
    }
    const state = await page.state()
    page.close()
    const got = new Map(
      state.policies.map((p) => [
        p.id,
        {
          allowed: counted(p, 'allowed'),
          refused: counted(p, 'refused'),
          shadow: counted(p, 'shadow'),
          failOpen: counted(p, 'failOpen'),
        },
      ]),
    )
    expect(got).toEqual(expected)
    expect(got.get('direct-two/short')).toEqual({ allowed: 4, refused: 1, shadow: 0, failOpen: 0 })
    expect(got.get('direct-shadow/direct-shadow')?.shadow).toBe(2)
  })

  it('serves two inspectors on one limiter; closing one leaves the other counting', async () => {
    const limiter = createLimiter({ name: 'watched-twice', limit: 100, window: '1m' })
    const first = inspector({ limiters: [limiter], authorize: () => true })
    const second = inspector({ limiters: [limiter], authorize: () => true })
    await limiter.consume('a')
    first.close()
    await limiter.consume('b')
    const allowed = async (page: typeof first) =>
      counted((await page.state()).policies[0], 'allowed')
    expect([await allowed(first), await allowed(second)]).toEqual([1, 2])
    second.close()
    await limiter.consume('c')
    expect([await allowed(first), await allowed(second)]).toEqual([1, 2])
  })

  it('hears a limiter it cannot watch directly (not made by createLimiter) on the channel', async () => {
    await clearOfMinuteEdge()
    const real = createLimiter({ name: 'hand-made', limit: 1, window: '1m' })
    // a Limiter of its own making: no hook, so the recorder listens to limiter:decision for it
    const handMade = Object.fromEntries(Object.entries(real)) as unknown as typeof real
    const page = inspector({ limiters: [handMade], authorize: () => true, maskKey: false })
    expect(channel('limiter:decision').hasSubscribers).toBe(true)
    const decisions = channel('limiter:decision')
    for (const decision of [await real.consume('k'), await real.consume('k')])
      decisions.publish({ limiter: handMade, key: 'k', cost: 1, decision, shadow: false })
    const policy = (await page.state()).policies[0]
    page.close()
    expect(channel('limiter:decision').hasSubscribers).toBe(false)
    expect([counted(policy, 'allowed'), counted(policy, 'refused')]).toEqual([1, 1])
    expect(policy?.top['1m']).toEqual([{ key: 'k', count: 1, error: 0 }])
  })

  it('files allowed decisions under their own second, counted when read', async () => {
    const { withClock } = await import('@limiter/core/testing')
    const { Recorder } = await import('../src/recorder.js')
    const start = 1_700_000_000_000
    let atMs = start + 999
    const limiter = createLimiter(withClock({ name: 'lazy', limit: 10, window: '1h' }, () => atMs))
    const recorder = new Recorder([limiter], 8, () => 0)
    recorder.start()
    const record = recorder.policies.get(limiter)?.[0]
    const countsAt = (ms: number) => {
      const second = Math.floor(ms / 1000)
      const slot = second % 900
      return record?.seconds[slot] === second
        ? [record.counts[slot * 5], record.counts[slot * 5 + 1]]
        : undefined
    }
    try {
      await limiter.consume('k')
      await limiter.consume('k')
      atMs = start + 1000 // the next second
      for (let i = 0; i < 3; i++) await limiter.consume('k')
      atMs = start + 500 // the clock stepped back
      await limiter.consume('k')
      atMs = start + 1500
      // read while recording: what was counted so far is there (allowed, the last two seconds)
      expect(record?.rates(atMs, 1)[0]?.slice(-2)).toEqual([3, 3])
      await limiter.consume('k') // counted with start + 1000's, once read
      // 15 minutes on, a refusal files into the same slot first: the allowed one left is gone
      atMs = start + 1500 + 900_000
      await limiter.consume('k', 10) // refused
      for (let i = 0; i < 2; i++) await limiter.consume('k')
    } finally {
      recorder.stop()
    }
    expect(countsAt(start + 1000)).toBeUndefined()
    expect(countsAt(start + 1000 + 900_000)).toEqual([2, 1])
  })
})
