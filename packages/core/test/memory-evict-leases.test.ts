// MemoryStore at maxKeys never drops a key that holds a live concurrency lease: a flood of
// distinct client keys in the same store must not let more calls run at once than `limit`.
import { describe, expect, it } from 'vitest'
import { createLimiter, type Decision, MemoryStore } from '../src/index.js'

const flood = async (consume: (key: string) => Promise<unknown>, from: number, n: number) => {
  for (let i = from; i < from + n; i++) await consume(`ip:${i}`)
}

const admitted = async (consume: () => Promise<Decision>, n: number): Promise<number> => {
  let allowed = 0
  for (let i = 0; i < n; i++) if ((await consume()).allowed) allowed++
  return allowed
}

describe('MemoryStore eviction and live leases', () => {
  it('a flood of distinct keys keeps a busy key and its live leases', async () => {
    const store = new MemoryStore({ maxKeys: 100 })
    const slots = createLimiter({ algorithm: 'concurrency', limit: 2, window: '1m', store })
    const perClient = createLimiter({ limit: 10, window: '1m', store })
    const held = [await slots.acquire('partner-api'), await slots.acquire('partner-api')]
    expect(held.map((d) => d.allowed)).toEqual([true, true])
    await flood((key) => perClient.consume(key), 0, 1000)
    expect(store.size).toBeLessThanOrEqual(100)
    // both leases are still held: no third call runs
    expect(await admitted(() => slots.consume('partner-api'), 5)).toBe(0)
    expect((await slots.peek('partner-api')).remaining).toBe(0)
    // a release frees exactly one slot
    await slots.release('partner-api', held[0] as Decision)
    expect(await admitted(() => slots.consume('partner-api'), 5)).toBe(1)
    // the rate state of the newest keys is still counted exactly
    expect((await perClient.peek('ip:999')).remaining).toBe(9)
    await store.close()
  })

  it('keys full of live leases are held, with at most 1% of maxKeys more', async () => {
    const maxKeys = 100
    const store = new MemoryStore({ maxKeys })
    const slots = createLimiter({ algorithm: 'concurrency', limit: 1, window: '1m', store })
    const perClient = createLimiter({ limit: 10, window: '1m', store })
    const leases: Decision[] = []
    for (let i = 0; i < 150; i++) leases.push(await slots.consume(`job:${i}`))
    expect(leases.filter((d) => d.allowed)).toHaveLength(150)
    let largest = 0
    await flood(
      async (key) => {
        await perClient.consume(key)
        largest = Math.max(largest, store.size)
      },
      0,
      1000,
    )
    expect(largest).toBeLessThanOrEqual(150 + maxKeys / 100)
    // every key still holds its lease: none admits a second call
    let second = 0
    for (let i = 0; i < 150; i++) if ((await slots.consume(`job:${i}`)).allowed) second++
    expect(second).toBe(0)
    // once the leases are released, the store is back within maxKeys after the next flood
    for (let i = 0; i < 150; i++) await slots.release(`job:${i}`, leases[i] as Decision)
    await flood((key) => perClient.consume(key), 1000, 1000)
    expect(store.size).toBeLessThanOrEqual(maxKeys)
    await store.close()
  })
})
