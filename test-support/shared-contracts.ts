// Test support: the contracts every adapter runs in full, opened the same way in each adapter's
// tests: on the embedded MemoryStore (adapter, several limits, concurrency and waiting), and on
// its test file's private redis-server (Redis, concurrency and waiting).
import { expect } from 'vitest'
import { describeAdapterContract } from './adapter-contract.js'
import type { StoreLike } from './adapter-helpers.js'
import { type ConcurrencyBackend, describeConcurrencyContract } from './concurrency-contract.js'
import type { AdapterHarness } from './harness.js'
import { describeLimitsContract } from './limits-contract.js'
import { freePort } from './redis.js'
import { describeRedisContract } from './redis-contract.js'

/** The adapter, several-limits and concurrency contracts against `harness`, on `core`'s stores. */
export function describeMemoryContracts(
  harness: AdapterHarness,
  core: Pick<ConcurrencyBackend, 'createLimiter'> & { readonly store: () => StoreLike },
): void {
  describeAdapterContract('adapter contract', harness)
  describeLimitsContract('several limits', harness)
  describeConcurrencyContract('concurrency and waiting', harness, {
    store: core.store,
    createLimiter: core.createLimiter,
  })
}

/** A Redis client library as the tests use it: the file's client, and how to make one. */
export interface RedisBackend<C> {
  /** The test file's client (from `useRedis(connect)`). */
  readonly client: () => C
  /** A new client of the same library on 127.0.0.1:`port`. */
  readonly connect: (port: number) => C
  /** A RedisStore on `client`. */
  readonly store: (client: C) => StoreLike
}

/** The Redis contract against `harness` on `redis`: its client, store and an unreachable one. */
export function describeRedisOn<C>(harness: AdapterHarness, redis: RedisBackend<C>): void {
  describeRedisContract('adapter contract', harness, {
    client: redis.client,
    store: () => redis.store(redis.client()),
    unreachable: async () => {
      const port = await freePort()
      return { client: redis.connect(port), address: `127.0.0.1:${port}` }
    },
  })
}

/** The Redis contract, then concurrency and waiting, against `harness` on `redis`. */
export function describeRedisContracts<C>(
  harness: AdapterHarness,
  redis: RedisBackend<C> & Pick<ConcurrencyBackend, 'createLimiter'>,
): void {
  describeRedisOn(harness, redis)
  describeConcurrencyContract('concurrency and waiting', harness, {
    store: () => redis.store(redis.client()),
    batching: true,
    createLimiter: redis.createLimiter,
  })
}

/**
 * A login route limited 2 per 15 minutes per user with sliding-log, as the READMEs show, on
 * Redis: `login(user)` posts as `user` and resolves to the status and headers; `keys()` lists the
 * test's keys in Redis, one of which holds `stored` (the route and the user's key).
 */
export async function expectLoginLimited(
  login: (user: string) => Promise<{ status: number; headers: Record<string, unknown> }>,
  keys: () => Promise<string[]>,
  stored: string,
): Promise<void> {
  expect((await login('a@example.com')).status).toBe(200)
  expect((await login('a@example.com')).status).toBe(200)
  const limited = await login('a@example.com')
  expect(limited.status).toBe(429)
  expect(Number(limited.headers['retry-after'])).toBeGreaterThan(800)
  expect((await login('b@example.com')).status).toBe(200)
  expect((await keys()).some((k) => k.includes(stored))).toBe(true)
}

/**
 * On an app limited to 1 whose onLimited answers 418 with `{ retryAfterMs, retryAfter }` (the
 * decision's, and the Retry-After header already set): `get()` twice, the second is that answer.
 */
export async function expectOnLimitedAnswer(
  get: () => Promise<{ status: number; body: unknown; headers: Record<string, unknown> }>,
): Promise<void> {
  await get()
  const res = await get()
  const body = res.body as { retryAfterMs: number; retryAfter: unknown }
  expect(res.status).toBe(418)
  expect(body.retryAfterMs).toBeGreaterThan(0)
  expect(body.retryAfter).toBe(res.headers['retry-after'])
  expect(res.headers.ratelimit).toMatch(/r=0/)
}
