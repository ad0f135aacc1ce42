// Test support shared by the adapters' suites: a store wrapper that counts what it was asked, and
// a wait for a condition that another part of the request cycle makes true, and a private Redis.
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll } from 'vitest'
import { type RedisProcess, startRedis } from './redis.js'

/** What `countingStore` needs of the store it wraps (any `Store` from @limiter/core). */
export interface StoreLike {
  consume(call: never): Promise<unknown>
  refund(call: never): Promise<unknown>
  reset(call: never): Promise<unknown>
  readonly local?: boolean
}

/** A store that counts what it was asked. */
export type CountingStore<S extends StoreLike> = S & {
  consumes: number
  refunds: number
  keys: string[]
}

/** A store that delegates to `inner` and counts consumes and refunds, and the keys consumed. */
export function countingStore<S extends StoreLike>(inner: S): CountingStore<S> {
  const store = {
    consumes: 0,
    refunds: 0,
    keys: [] as string[],
    local: inner.local === true,
    consume(call: { readonly key: string }) {
      store.consumes++
      store.keys.push(call.key)
      return inner.consume(call as never)
    },
    refund(call: unknown) {
      store.refunds++
      return inner.refund(call as never)
    },
    reset: (call: unknown) => inner.reset(call as never),
  }
  return store as unknown as CountingStore<S>
}

/** Resolves once `check()` is true, or fails after `timeoutMs`. */
export async function until(check: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 5))
  }
}

/**
 * Starts a private redis-server for the calling test file (beforeAll/afterAll) and a client on it
 * made by `connect`, such as `(port) => new Redis(port, '127.0.0.1')`. The returned object's
 * `server` and `client` are there inside tests.
 */
export function useRedisServer<C extends { disconnect(): void }>(
  connect: (port: number) => C,
): { readonly server: RedisProcess; readonly client: C } {
  let server: RedisProcess | undefined
  let client: C | undefined
  beforeAll(async () => {
    server = await startRedis()
    client = connect(server.port)
  })
  afterAll(async () => {
    client?.disconnect()
    await server?.stop()
  })
  const inside = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useRedis: the server is there only inside tests')
    return value
  }
  return {
    get server() {
      return inside(server)
    },
    get client() {
      return inside(client)
    },
  }
}

/** {@link useRedisServer}, as a getter for its client. */
export function useRedis<C extends { disconnect(): void }>(connect: (port: number) => C): () => C {
  const redis = useRedisServer(connect)
  return () => redis.client
}

/**
 * Waits until `server` (from an app's `listen(0, '127.0.0.1')`) listens; returns its base URL and
 * a close that drops open connections first.
 */
export async function served(server: Server): Promise<{ url: string; close(): Promise<void> }> {
  if (!server.listening) await new Promise((resolve) => server.once('listening', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

/** Counts handlers running at once: `start()` as one begins, `stop()` as it answers. */
export function runningCounter(): { readonly peak: number; start(): void; stop(): void } {
  let now = 0
  let peak = 0
  return {
    get peak() {
      return peak
    },
    start() {
      now++
      if (now > peak) peak = now
    },
    stop() {
      now--
    },
  }
}

let prefixes = 0
/** A store-key prefix of its own for each call, so tests on one Redis never share counters. */
export const freshPrefix = (): string => `t${++prefixes}:`

/**
 * `count` sets of client-address headers a client can forge, each naming different addresses:
 * X-Real-IP, Forwarded, True-Client-IP, CF-Connecting-IP, X-Client-IP and, with
 * `xForwardedFor`, X-Forwarded-For.
 */
export function forgedAddressHeaders(
  count: number,
  xForwardedFor = false,
): ReadonlyArray<Record<string, string>> {
  return Array.from({ length: count }, (_, i) => ({
    ...(xForwardedFor ? { 'x-forwarded-for': `198.51.100.${i}` } : {}),
    'x-real-ip': `203.0.113.${i}`,
    forwarded: `for=192.0.2.${i};proto=https, for="[2001:db8::${i}]"`,
    'true-client-ip': `192.0.2.${100 + i}`,
    'cf-connecting-ip': `192.0.2.${200 + i}`,
    'x-client-ip': `2001:db8:${i}::1`,
  }))
}

/**
 * Collects the process warnings emitted until `stop()`, keeping them off stderr meanwhile (Node's
 * own printer is detached and put back). Warnings are emitted on the next tick: await one first.
 */
export function captureWarnings(): { readonly warnings: Error[]; stop(): void } {
  const saved = process.listeners('warning')
  process.removeAllListeners('warning')
  const warnings: Error[] = []
  const collect = (warning: Error) => {
    warnings.push(warning)
  }
  process.on('warning', collect)
  return {
    warnings,
    stop() {
      process.off('warning', collect)
      for (const listener of saved) process.on('warning', listener)
    },
  }
}

/** A process warning as Node emits it: `code` is set for ours (`LIMITER_...`). */
export type Warning = Error & { readonly code?: string }

/**
 * Runs `body` and returns the process warnings it emitted (waiting the tick Node emits them on),
 * keeping them off stderr.
 */
export async function warningsDuring(body: () => Promise<void>): Promise<Warning[]> {
  const capture = captureWarnings()
  try {
    await body()
    await new Promise((r) => setImmediate(r))
    return capture.warnings as Warning[]
  } finally {
    capture.stop()
  }
}

/** A store whose `release` and `refund` calls {@link countGiveBacks} counts. */
export interface GivingBack {
  release(call: never): Promise<void>
  refund(call: never): Promise<void>
}

/**
 * Counts what `store` is asked to give back (concurrency leases released, costs refunded): its
 * `release` and `refund` are wrapped in place, and the counts read live.
 */
export function countGiveBacks(store: GivingBack): { releases: number; refunds: number } {
  const counts = { releases: 0, refunds: 0 }
  const release = store.release.bind(store)
  const refund = store.refund.bind(store)
  store.release = (call) => {
    counts.releases++
    return release(call)
  }
  store.refund = (call) => {
    counts.refunds++
    return refund(call)
  }
  return counts
}
