// Decisions per second of a MemoryStore limiter with and without an inspector attached (the
// limiter tells its recorder each decision directly). Run after `pnpm build`:
//   node packages/inspector/scripts/bench-hot-path.mjs
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { createLimiter } from '@limiter/core'
import { inspector } from '../dist/index.mjs'

const N = 200_000
const ROUNDS = 5

async function run(limiter, keys) {
  const start = performance.now()
  for (let i = 0; i < N; i++) await limiter.consume(keys[i % keys.length])
  return N / ((performance.now() - start) / 1000)
}

async function measure(label, limit, keyCount) {
  const keys = Array.from({ length: keyCount }, (_, i) => `user:${i}`)
  const limiter = createLimiter({ name: `bench-${label}`, limit, window: '1m' })
  await run(limiter, keys) // warm up
  const off = []
  const on = []
  const bare = []
  const nothing = () => {}
  for (let r = 0; r < ROUNDS; r++) {
    off.push(await run(limiter, keys))
    subscribe('limiter:decision', nothing)
    bare.push(await run(limiter, keys))
    unsubscribe('limiter:decision', nothing)
    const page = inspector({ limiters: [limiter], authorize: () => true })
    on.push(await run(limiter, keys))
    page.close()
  }
  const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1]
  const a = median(off)
  const b = median(on)
  const c = median(bare)
  const pct = (x) => `${(((x - a) / a) * 100).toFixed(1)}%`
  console.log(
    `${label}: without ${Math.round(a)}/s; an empty subscriber ${Math.round(c)}/s (${pct(c)}); the inspector ${Math.round(b)}/s (${pct(b)})`,
  )
}

await measure('allowed (10k keys)', 1e9, 10_000)
await measure('refused (10k keys)', 1, 10_000)
