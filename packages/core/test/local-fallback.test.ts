// failureMode 'local': what the process-local fallback counted or learned is given back and lifted
// there. A store that is up, then down: a store of its own (`local: true`, no deadline) and a
// remote one (under the guard) take different paths through the limiter, so both are run.
import { describe, expect, it } from 'vitest'
import { createLimiter, type LimiterOptions, MemoryStore, type Store } from '../src/index.js'

// A MemoryStore behind a switch: every call fails while `down`; `calls` counts them by name.
function switchable(local: boolean) {
  const inner = new MemoryStore()
  const state = { down: false, calls: new Map<string, number>() }
  const through =
    <A extends unknown[], R>(name: string, fn: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      state.calls.set(name, (state.calls.get(name) ?? 0) + 1)
      return state.down ? Promise.reject(new Error('store down')) : fn(...args)
    }
  const store: Store = {
    consume: through('consume', (c) => inner.consume(c)),
    refund: through('refund', (c) => inner.refund(c)),
    release: through('release', (c) => inner.release(c)),
    reset: through('reset', (c) => inner.reset(c)),
    block: through('block', (c, ms: number) => inner.block(c, ms)),
    ...(local ? { local: true } : {}),
  }
  return { store, state }
}

function limiterOn(store: Store, options: Partial<LimiterOptions>) {
  return createLimiter({
    limit: 5,
    window: '1m',
    store,
    failureMode: 'local',
    circuitBreaker: false,
    onError: () => {},
    ...options,
  } as LimiterOptions)
}

describe.each([
  ['a remote store', false],
  ['a store of its own (local: true)', true],
])("failureMode 'local' on %s", (_, local) => {
  it('reset lifts a block in the fallback too: an outage after it does not bring it back', async () => {
    const { store, state } = switchable(local)
    const limiter = limiterOn(store, {})
    await limiter.block('u', '15m')
    await limiter.reset('u')
    expect(await limiter.consume('u')).toMatchObject({ allowed: true, source: 'store' })
    state.down = true
    expect(await limiter.consume('u')).toMatchObject({ allowed: true, source: 'local' })
    // a key still blocked when the store fails stays blocked in the fallback (as before)
    state.down = false
    await limiter.block('v', '15m')
    state.down = true
    expect(await limiter.consume('v')).toMatchObject({ allowed: false, source: 'local' })
  })

  it("a refund of the fallback's decision goes to the fallback, not to the failed store", async () => {
    const { store, state } = switchable(local)
    state.down = true
    const limiter = limiterOn(store, { algorithm: 'concurrency', limit: 2, window: '10m' })
    const first = await limiter.consume('k')
    const second = await limiter.consume('k')
    expect([first.source, first.allowed, second.allowed]).toEqual(['local', true, true])
    expect((await limiter.consume('k')).allowed).toBe(false)
    await limiter.refund('k', 1, first)
    await limiter.refund('k', 1, second)
    // both leases are back: two more fit, a third does not
    expect((await limiter.consume('k')).allowed).toBe(true)
    expect((await limiter.consume('k')).allowed).toBe(true)
    expect((await limiter.consume('k')).allowed).toBe(false)
    expect(state.calls.get('refund') ?? 0).toBe(0)
  })

  it("a rate refund of the fallback's decision gives the count back there", async () => {
    const { store, state } = switchable(local)
    state.down = true
    const limiter = limiterOn(store, { algorithm: 'fixed-window', limit: 2, window: '10m' })
    const decisions = [await limiter.consume('k'), await limiter.consume('k')]
    expect(decisions.map((d) => [d.allowed, d.source])).toEqual([
      [true, 'local'],
      [true, 'local'],
    ])
    await limiter.refund('k', 1, decisions[1])
    expect(await limiter.consume('k')).toMatchObject({ allowed: true, source: 'local' })
    expect((await limiter.consume('k')).allowed).toBe(false)
    expect(state.calls.get('refund') ?? 0).toBe(0)
  })
})
