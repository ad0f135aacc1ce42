// Core test setup for the tests across real child processes (fixtures/*.mjs): the built package
// they import, running a fixture, and the Redis topologies they share.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { Cluster, Redis } from 'ioredis'
import { beforeAll } from 'vitest'
import type { RedisCluster } from '../../../../test-support/redis.js'

const run = promisify(execFile)

/** The path of fixtures/`name`, for `spawn` and `fork`. */
export function fixture(name: string): string {
  return fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url))
}

/** Fails this file's tests at once, saying what to do, when the package is not built. */
export function requireBuilt(): void {
  beforeAll(() => {
    if (!existsSync(fileURLToPath(new URL('../../dist/index.mjs', import.meta.url))))
      throw new Error(
        'the tests across processes run the built package: run `pnpm build` first (`pnpm test` does)',
      )
  })
}

/**
 * Runs fixtures/`name` with `args` in a new Node process (`env` added to this one's, `timeout`
 * 90 s unless told) and resolves to what it printed.
 */
export async function runFixture(
  name: string,
  args: readonly string[],
  options: { env?: Record<string, string>; timeout?: number } = {},
): Promise<string> {
  const { stdout } = await run(process.execPath, [fixture(name), ...args], {
    env: { ...process.env, ...options.env },
    timeout: options.timeout ?? 90_000,
  })
  return stdout
}

/** A Redis the fixtures share: its name, the <ports> argument, a client on it, on a Cluster. */
export type Topology = readonly [
  name: string,
  ports: () => string,
  client: () => Redis | Cluster,
  clustered: boolean,
]

/** The standalone Redis of `useRedis()` and the Cluster of `useCluster()`, for describe.each. */
export function topologies(
  redis: { server: { port: number }; client: Redis },
  cluster: { cluster: RedisCluster; client: Cluster },
): readonly Topology[] {
  return [
    ['standalone', () => String(redis.server.port), () => redis.client, false],
    [
      'Cluster',
      () => cluster.cluster.startupNodes.map((n) => n.port).join(','),
      () => cluster.client,
      true,
    ],
  ]
}

/** The env that tells a fixture whether <ports> lists Cluster nodes (fixtures/connect.mjs). */
export function clusterEnv(clustered: boolean): Record<string, string> {
  return { CLUSTER: clustered ? '1' : '' }
}
