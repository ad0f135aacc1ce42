// Test support: the packed-tarball test every adapter runs. The adapter's tarball and core's are
// installed in a scratch directory outside the repo, the framework linked in as the user's own
// peer, and one script per module system answers two requests and prints what came back.
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { packAndInstall, type Scratch } from './pack.js'

/** How one adapter's packed package is exercised. */
export interface PackedAdapter {
  /** The package name, such as `@limiter/express`. */
  readonly name: string
  /** Its directory relative to the repo root, such as `packages/express`. */
  readonly dir: string
  /** The framework, a peer linked from the adapter's own dev install. */
  readonly peer: string
  /** Further peers the scripts load (Nest's platform packages, reflect-metadata...). */
  readonly peers?: readonly string[]
  /** An ES module that prints a JSON line. */
  readonly esm: string
  /** A CommonJS script that prints the same JSON line. */
  readonly cjs: string
  /** What both print. */
  readonly expected: unknown
}

/**
 * The body of a script that serves `app` (built by `setup` after `load` brings in the framework
 * and the adapter) on a free port, sends two requests and prints statuses, the first body, the
 * first RateLimit-Policy and the second content type. Top-level await: wrap it for CommonJS.
 */
export function listeningScript(load: string, setup: string): string {
  return `
${load}
${setup}
const server = app.listen(0, '127.0.0.1')
await new Promise((resolve) => server.once('listening', resolve))
const url = 'http://127.0.0.1:' + server.address().port + '/'
const ok = await fetch(url)
const limited = await fetch(url)
server.close()
console.log(JSON.stringify({
  statuses: [ok.status, limited.status],
  body: await ok.json(),
  policy: ok.headers.get('ratelimit-policy'),
  type: limited.headers.get('content-type'),
}))
`
}

/** What `listeningScript` prints for a limit of 1 per minute and a body of `body`. */
export function listeningExpected(body: unknown) {
  return {
    statuses: [200, 429],
    body,
    policy: '"gc1/1m";q=1;w=60',
    type: expect.stringMatching(/^application\/problem\+json/),
  }
}

/** Packs core and the adapter, installs them in a scratch directory and runs both scripts. */
export function describePackedAdapter(adapter: PackedAdapter): void {
  let scratch: Scratch

  beforeAll(async () => {
    scratch = await packAndInstall(
      ['packages/core', adapter.dir],
      [adapter.peer, ...(adapter.peers ?? [])],
      adapter.dir,
    )
  }, 180_000)
  afterAll(() => scratch?.remove())

  describe(`packed ${adapter.name}`, () => {
    it('imports as ESM and answers requests', async () => {
      expect(JSON.parse(await scratch.run('esm.mjs', adapter.esm))).toEqual(adapter.expected)
    })

    it('requires as CJS and answers requests', async () => {
      expect(JSON.parse(await scratch.run('cjs.cjs', adapter.cjs))).toEqual(adapter.expected)
    })

    it('ships only dist and package metadata', () => {
      const files = readdirSync(join(scratch.dir, 'node_modules', ...adapter.name.split('/')))
      const extra = ['dist', 'package.json', 'README.md', 'CHANGELOG.md', 'LICENSE']
      expect(files.filter((f) => !extra.includes(f))).toEqual([])
    })
  })
}
