// The build every published package shares: ESM + CJS with types, for Node 20.
import { defineConfig, type UserConfig } from 'tsdown'

/**
 * A package's tsdown config: `entry` defaults to `src/index.ts`; an object names each entry's
 * output (`{ otel: 'src/observability/otel/index.ts' }` builds dist/otel.*).
 */
export function packageBuild(
  entry: string[] | Record<string, string> = ['src/index.ts'],
): UserConfig {
  return defineConfig({
    entry,
    format: ['esm', 'cjs'],
    dts: true,
    platform: 'node',
    target: 'node20',
  })
}
