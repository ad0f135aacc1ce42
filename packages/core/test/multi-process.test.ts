// Exactness and clock skew with real child processes sharing one Redis.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RedisCluster, startCluster } from '../../../test-support/redis.js'
import { ALGORITHMS, type Decision } from '../src/index.js'
import { clusterEnv, requireBuilt, runFixture } from './setup/processes.js'
import { useRedis } from './setup/redis.js'

const redis = useRedis()

requireBuilt()

async function consumeIn(
  key: string,
  algorithm: string,
  count: number,
  options: {
    limit: number
    window: number
    startAt?: number
    skewMs?: number
    sequential?: boolean
    /** Several policies (JSON `limits`) instead of `algorithm`, `limit` and `window`. */
    limits?: readonly object[]
    /** Cluster node ports instead of the file's standalone Redis. */
    cluster?: readonly number[] | undefined
  },
): Promise<Decision[]> {
  const args = [
    options.cluster === undefined ? String(redis.server.port) : options.cluster.join(','),
    algorithm,
    key,
    String(count),
    String(options.limit),
    String(options.window),
    String(options.startAt ?? 0),
    options.sequential ? '1' : '0',
  ]
  const stdout = await runFixture('consumer.mjs', args, {
    env: {
      SKEW_MS: String(options.skewMs ?? 0),
      LIMITS: options.limits === undefined ? '' : JSON.stringify(options.limits),
      ...clusterEnv(options.cluster !== undefined),
    },
    timeout: 60_000,
  })
  return JSON.parse(stdout) as Decision[]
}

describe('exactness across processes', () => {
  it.each(ALGORITHMS)(
    '%s: 4 processes x 500 concurrent consumes on one key admit exactly what the algorithm allows',
    async (algorithm) => {
      const startAt = Date.now() + 1500
      const results = await Promise.all(
        Array.from({ length: 4 }, () =>
          consumeIn(`exact-${algorithm}`, algorithm, 500, {
            limit: 1000,
            window: 3_600_000,
            startAt,
          }),
        ),
      )
      const admitted = results.flat().filter((d) => d.allowed).length
      if (algorithm === 'sliding-window') expect(admitted).toBeLessThanOrEqual(1000)
      else expect(admitted).toBe(1000)
      // Rejections carry a positive Retry-After; admissions report consistent remaining counts.
      for (const d of results.flat()) {
        if (!d.allowed) expect(d.retryAfterMs).toBeGreaterThan(0)
        expect(d.remaining).toBeGreaterThanOrEqual(0)
      }
    },
  )
})

describe('exactness across processes, several policies on one key', () => {
  let cluster: RedisCluster
  beforeAll(async () => {
    cluster = await startCluster(3, 0)
  }, 120_000)
  afterAll(() => cluster?.stop())

  // Policies that do not refill within the test: the tighter one caps exactly, and the other
  // must have counted exactly the admitted requests (a refused request counts nowhere).
  const cases = [
    [
      'gcra 10/h + fixed-window 25/h',
      [
        { name: 'tight', algorithm: 'gcra', limit: 10, window: 3_600_000 },
        { name: 'roomy', algorithm: 'fixed-window', limit: 25, window: 3_600_000 },
      ],
      10,
    ],
    [
      'sliding-log 25/h + token-bucket 100/h',
      [
        { name: 'tight', algorithm: 'sliding-log', limit: 25, window: 3_600_000 },
        { name: 'roomy', algorithm: 'token-bucket', limit: 100, window: 3_600_000 },
      ],
      25,
    ],
  ] as const

  it.each([['standalone'], ['Cluster']])(
    '%s: 4 processes x 500 concurrent consumes admit exactly what the tighter policy allows',
    async (where) => {
      const ports = where === 'Cluster' ? cluster.nodes.map((n) => n.port) : undefined
      for (const [label, limits, expected] of cases) {
        const key = `limits-${where}-${label}`
        const startAt = Date.now() + 1500
        const results = await Promise.all(
          Array.from({ length: 4 }, () =>
            consumeIn(key, 'gcra', 500, { limit: 1, window: 1, startAt, limits, cluster: ports }),
          ),
        )
        const all = results.flat()
        expect(
          all.filter((d) => d.allowed),
          label,
        ).toHaveLength(expected)
        // the roomy policy counted the admitted requests and nothing else
        const roomy = limits[1].limit - expected
        const last = all.filter((d) => d.allowed).map((d) => d.policies[1]?.remaining ?? -1)
        expect(Math.min(...last), label).toBe(roomy)
        for (const d of all.filter((x) => !x.allowed))
          expect(d.policies.map((p) => p.allowed)).toEqual([false, true])
        // a process that comes afterwards sees the same counts
        const [after] = await consumeIn(key, 'gcra', 1, {
          limit: 1,
          window: 1,
          limits,
          cluster: ports,
        })
        expect(after?.policies.map((p) => p.remaining)).toEqual([0, roomy])
      }
    },
    60_000,
  )
})

describe('clock skew', () => {
  it.each(['gcra', 'fixed-window', 'sliding-log'])(
    '%s: processes whose clocks differ by 20 minutes share one exact limit',
    async (algorithm) => {
      const key = `skew-${algorithm}`
      const ahead = await consumeIn(key, algorithm, 6, {
        limit: 10,
        window: 3_600_000,
        skewMs: 600_000,
        sequential: true,
      })
      const behind = await consumeIn(key, algorithm, 6, {
        limit: 10,
        window: 3_600_000,
        skewMs: -600_000,
        sequential: true,
      })
      const aheadAgain = await consumeIn(key, algorithm, 3, {
        limit: 10,
        window: 3_600_000,
        skewMs: 600_000,
        sequential: true,
      })
      expect(ahead.map((d) => d.allowed)).toEqual([true, true, true, true, true, true])
      expect(behind.map((d) => d.allowed)).toEqual([true, true, true, true, false, false])
      expect(aheadAgain.map((d) => d.allowed)).toEqual([false, false, false])
      // Both clocks see the same Retry-After (from Redis TIME), give or take the test's own runtime.
      const a = aheadAgain[0]?.retryAfterMs ?? 0
      const b = behind[4]?.retryAfterMs ?? 0
      expect(Math.abs(a - b)).toBeLessThan(5_000)
    },
  )
})
