// Builds what the bench measures before it runs: @limiter/core must build; the adapters may
// fail (they are young), in which case their HTTP rows say why instead of stopping the bench.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const ADAPTERS = [
  '@limiter/express',
  '@limiter/koa',
  '@limiter/fastify',
  '@limiter/hono',
  '@limiter/nest',
  // not an adapter: the events section attaches it (skipped when it is not built)
  '@limiter/inspector',
]

function turboBuild(filters) {
  const args = [
    'exec',
    'turbo',
    'run',
    'build',
    ...filters.map((f) => `--filter=${f}`),
    '--continue',
    '--output-logs=errors-only',
  ]
  return spawnSync('pnpm', args, { cwd: ROOT, stdio: 'inherit' }).status === 0
}

/** Builds core (throws if that fails) and then the adapters (returns false if any failed). */
export function buildPackages(log) {
  log('building @limiter/core and the adapters (turbo, cached)')
  if (!turboBuild(['@limiter/core']))
    throw new Error('@limiter/core failed to build: fix it or run with --no-build')
  const ok = turboBuild(ADAPTERS)
  if (!ok) log('an adapter failed to build: its HTTP rows will say so')
  return ok
}
