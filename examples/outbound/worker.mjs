// One worker process: calls the partner API through the shared limiter, as fast as the limiter
// lets it, from CALLERS concurrent callers, until DEADLINE (epoch ms). Reports its counts to the
// parent.
import { createLimiter, RedisStore } from '@limiter/core'
import { Redis } from 'ioredis'

const { REDIS_URL, UPSTREAM, QUOTA, SHARE, CALLERS, PREFIX } = process.env
const client = new Redis(REDIS_URL)

// The partner allows QUOTA calls per second. The limiter allows SHARE of it (see README: the
// margin absorbs network and timer jitter), one at a time (burst 1), and lets a caller wait up
// to 5 s for its turn instead of failing.
const partner = createLimiter({
  algorithm: 'gcra',
  limit: Math.floor(Number(QUOTA) * Number(SHARE)),
  window: '1s',
  burst: 1,
  maxDelay: '5s',
  name: 'partner-api',
  prefix: PREFIX,
  store: new RedisStore({ client }),
})

const counts = { calls: 0, ok: 0, limited: 0, refused: 0 }

async function caller(deadline) {
  for (;;) {
    const left = deadline - Date.now()
    if (left <= 0) return
    try {
      // resolves when this call may go; past the deadline the signal aborts the wait and the
      // reserved slot is given back
      await partner.acquire('partner', { signal: AbortSignal.timeout(left) })
    } catch (error) {
      if (error?.code === 'ERR_LIMITER_REFUSED') counts.refused++
      continue
    }
    counts.calls++
    const response = await fetch(UPSTREAM)
    await response.arrayBuffer()
    if (response.status === 429) counts.limited++
    else counts.ok++
  }
}

// Connections and the limiter's script are warmed up before the clock starts: a first call that
// takes 30 ms longer than the next would bunch with them at the API.
await Promise.all(
  Array.from({ length: Number(CALLERS) }, () =>
    fetch(new URL('/warm-up', UPSTREAM)).then((r) => r.arrayBuffer()),
  ),
)
await partner.peek('partner')
// every worker ready: the parent says when to start and stop
const { start, deadline } = await new Promise((resolve) => {
  process.once('message', resolve)
  process.send?.({ ready: true })
})
await new Promise((resolve) => setTimeout(resolve, Math.max(0, start - Date.now())))
await Promise.all(Array.from({ length: Number(CALLERS) }, () => caller(deadline)))
process.send?.(counts)
client.disconnect()
