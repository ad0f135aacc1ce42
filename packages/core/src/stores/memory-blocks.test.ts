// Regression: MemoryStore's blocks, on keys a client chooses (`login:${email}`), were not counted
// by maxKeys: 200,000 blocks held about 20 MB until they ended.
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { createLimiter } from '../limiter/create-limiter.js'
import { MemoryStore } from './memory-store.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

describe('MemoryStore blocks and maxKeys', () => {
  it('counts blocks with the counters, and drops the oldest when full', async () => {
    const maxKeys = 1000
    const store = new MemoryStore({ maxKeys })
    const logins = createLimiter({ name: 'login', limit: 10, window: '15m', store })
    // counters first, then a flood of blocks on distinct keys
    for (let i = 0; i < 500; i++) await logins.consume(`ip:${i}`)
    expect(store.size).toBe(500)
    let largest = 0
    for (let i = 0; i < 20_000; i++) {
      await logins.block(`login:${i}@example.com`, '15m')
      largest = Math.max(largest, store.size)
    }
    expect(largest).toBeLessThanOrEqual(maxKeys)
    // the newest blocks still hold, the oldest went first
    expect((await logins.consume('login:19999@example.com')).allowed).toBe(false)
    expect((await logins.consume('login:0@example.com')).allowed).toBe(true)
    // blocking a key already blocked takes no room
    const before = store.size
    await logins.block('login:19999@example.com', '20m')
    expect(store.size).toBe(before)
    await store.close()
  })

  it('200,000 blocks on distinct keys keep memory bounded', async () => {
    const store = new MemoryStore({ maxKeys: 1000 })
    const logins = createLimiter({ name: 'login', limit: 10, window: '15m', store })
    const heapAfter = async (from: number, to: number) => {
      for (let i = from; i < to; i++) await logins.block(`login:${i}@example.com`, '15m')
      gc()
      return process.memoryUsage().heapUsed
    }
    const warm = await heapAfter(0, 5_000)
    const after = await heapAfter(5_000, 200_000)
    expect(store.size).toBeLessThanOrEqual(1000)
    // unbounded, 195,000 more blocks hold about 20 MB
    expect(after - warm).toBeLessThan(8 * 1024 * 1024)
    await store.close()
  }, 60_000)
})
