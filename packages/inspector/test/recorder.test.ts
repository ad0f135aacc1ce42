// What the recorder takes from the channels: fail-open decisions, store errors and circuits from
// a failing store, shadow refusals, and per-policy refusals of a several-policy limiter.
import { createLimiter, MemoryStore, type Store } from '@limiter/core'
import { describe, expect, it } from 'vitest'
import { inspector, type PolicyState } from '../src/index.js'

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
