// Section 9's worker: `calls` run() calls at once on one concurrency key, each holding its slot
// `holdMs`, counting this process's store decisions on `limiter:decision`. Alone (imported) or
// as one of several processes sharing a Redis key: then argument JSON { core, port, calls,
// limit, holdMs, key }, 'ready' to the parent once connected, and on 'go' one result message.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { setTimeout as sleep } from 'node:timers/promises'
import { pathToFileURL } from 'node:url'
import { Redis } from 'ioredis'

/** A limiter at `limit` over a fresh MemoryStore, or a RedisStore on 127.0.0.1:`port`. */
export async function waitersLimiter({ core, port, limit }) {
  const { createLimiter, MemoryStore, RedisStore } = await import(pathToFileURL(core).href)
  const client = port === undefined ? undefined : new Redis({ host: '127.0.0.1', port })
  await client?.ping()
  const limiter = createLimiter({
    algorithm: 'concurrency',
    limit,
    window: '1m',
    prefix: 'wt:',
    // 4,000 callers asking at once on a shared machine: a slow answer must not fail open
    timeout: '10s',
    store: client === undefined ? new MemoryStore() : new RedisStore({ client }),
  })
  return { limiter, close: () => client?.quit() }
}

/** `calls` run() calls at once: { decisions, wallMs, served, refused, maxInFlight }. */
export async function runWaiters(limiter, { calls, holdMs, key }) {
  let decisions = 0
  const count = (event) => {
    if (event.limiter === limiter && event.cost > 0) decisions++
  }
  subscribe('limiter:decision', count)
  let inFlight = 0
  let maxInFlight = 0
  let served = 0
  let refused = 0
  const hold = async () => {
    maxInFlight = Math.max(maxInFlight, ++inFlight)
    await sleep(holdMs)
    inFlight--
    served++
  }
  const started = performance.now()
  await Promise.all(
    Array.from({ length: calls }, () =>
      limiter.run(key, hold, { maxWait: '2m' }).catch(() => refused++),
    ),
  )
  const wallMs = performance.now() - started
  unsubscribe('limiter:decision', count)
  return { decisions, wallMs, served, refused, maxInFlight }
}

if (process.send !== undefined && process.argv[2] !== undefined) {
  const options = JSON.parse(process.argv[2])
  const { limiter, close } = await waitersLimiter(options)
  process.once('message', async () => {
    const result = await runWaiters(limiter, options)
    await close()
    process.send(result, () => process.exit(0))
  })
  process.send('ready')
}
