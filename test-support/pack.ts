// Test support: pack workspace packages with `pnpm pack` and install the tarballs in a scratch
// directory outside the repository, as a user would, then run scripts there as ESM and CJS.
import { execFile, execFileSync } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const run = promisify(execFile)
export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url))

// The directory of package `name` as `require` finds it: through its package.json, or, when its
// exports hide that (reflect-metadata, hono), up from its main file to the package.json that
// names it (hono's dist/cjs holds a package.json of its own, with only a `type`).
function packageDir(require: NodeRequire, name: string): string {
  try {
    return realpathSync(dirname(require.resolve(`${name}/package.json`)))
  } catch {
    let at = dirname(realpathSync(require.resolve(name)))
    while (!namesPackage(join(at, 'package.json'), name) && dirname(at) !== at) at = dirname(at)
    return at
  }
}

function namesPackage(file: string, name: string): boolean {
  return (
    existsSync(file) && (JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown }).name === name
  )
}

/** A scratch project with the packed packages installed. */
export interface Scratch {
  readonly dir: string
  /** Writes `file` into the scratch project and runs it with node; returns stdout. */
  run(file: string, source: string, args?: readonly string[]): Promise<string>
  remove(): void
}

/**
 * Packs `packageDirs` (relative to the repo root), installs the tarballs into a fresh directory
 * under the OS temp dir, and links `peers` (package names resolvable from `resolveFrom`) into its
 * node_modules, since peers such as ioredis or express come from the user's own install.
 */
export async function packAndInstall(
  packageDirs: readonly string[],
  peers: readonly string[],
  resolveFrom: string,
): Promise<Scratch> {
  const dir = mkdtempSync(join(tmpdir(), 'limiter-pack-'))
  const tarballs: string[] = []
  for (const pkg of packageDirs) {
    const out = execFileSync('pnpm', ['pack', '--pack-destination', dir], {
      cwd: join(REPO_ROOT, pkg),
      encoding: 'utf8',
    })
    const tgz = out.trim().split('\n').pop()?.trim()
    if (!tgz?.endsWith('.tgz')) throw new Error(`pnpm pack printed no tarball for ${pkg}: ${out}`)
    tarballs.push(tgz)
  }
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'scratch', private: true, version: '0.0.0' }),
  )
  await run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--legacy-peer-deps', ...tarballs],
    { cwd: dir, timeout: 120_000 },
  )
  const require = createRequire(join(REPO_ROOT, resolveFrom, 'package.json'))
  for (const peer of peers) {
    const target = join(dir, 'node_modules', peer)
    mkdirSync(dirname(target), { recursive: true })
    symlinkSync(packageDir(require, peer), target, 'dir')
  }
  return {
    dir,
    async run(file, source, args = []) {
      writeFileSync(join(dir, file), source)
      const { stdout } = await run(process.execPath, [join(dir, file), ...args], {
        cwd: dir,
        timeout: 60_000,
      })
      return stdout
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  }
}
