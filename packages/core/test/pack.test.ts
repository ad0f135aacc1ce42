// The packed tarball works from a scratch directory outside the repo, as ESM and as CJS, with the
// Lua scripts embedded (nothing reads the repository's lua/ folder).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { packAndInstall, type Scratch } from '../../../test-support/pack.js'
import { useRedis } from './setup/redis.js'

const redis = useRedis()
let scratch: Scratch

beforeAll(async () => {
  scratch = await packAndInstall(['packages/core'], ['ioredis'], 'packages/core')
}, 180_000)
afterAll(() => scratch?.remove())

const body = (load: string) => `
${load}
const port = Number(process.argv[2])
const memory = createLimiter({ algorithm: 'gcra', limit: 1, window: '1m' })
const client = new Redis(port, '127.0.0.1')
const redis = createLimiter({ algorithm: 'sliding-log', limit: 1, window: '1m', store: new RedisStore({ client }), prefix: process.argv[3] })
const out = [(await memory.consume('k')).allowed, (await memory.consume('k')).allowed, (await redis.consume('k')).allowed, (await redis.consume('k')).allowed]
client.disconnect()
console.log(JSON.stringify(out))
`

describe('packed @limiter/core', () => {
  it('imports as ESM and decides in memory and on Redis', async () => {
    const out = await scratch.run(
      'esm.mjs',
      body(
        "import { createLimiter, RedisStore } from '@limiter/core'\nimport { Redis } from 'ioredis'",
      ),
      [String(redis.server.port), 'esm:'],
    )
    expect(JSON.parse(out)).toEqual([true, false, true, false])
  })
  it('requires as CJS and decides in memory and on Redis', async () => {
    const cjs = `(async () => {${body("const { createLimiter, RedisStore } = require('@limiter/core')\nconst { Redis } = require('ioredis')")}})()`
    const out = await scratch.run('cjs.cjs', cjs, [String(redis.server.port), 'cjs:'])
    expect(JSON.parse(out)).toEqual([true, false, true, false])
  })
  it('the adapter kit loads from @limiter/core/http as ESM and as CJS, sharing the root module', async () => {
    const check = `
const kit = Object.keys(http).filter((k) => typeof http[k] === 'function').length
const rl = http.resolveRateLimitOptions({ limit: 1, window: '1m', store: new core.MemoryStore() }, { ip: () => '1.2.3.4' })
console.log(JSON.stringify([kit > 10, (await rl.limits.limiter.consume('k')).allowed, 'createLimiter' in http]))
`
    const esm = await scratch.run(
      'kit.mjs',
      `import * as core from '@limiter/core'\nimport * as http from '@limiter/core/http'\n${check}`,
      [],
    )
    expect(JSON.parse(esm)).toEqual([true, true, false])
    const cjs = await scratch.run(
      'kit.cjs',
      `const core = require('@limiter/core')\nconst http = require('@limiter/core/http');(async () => {${check}})()`,
      [],
    )
    expect(JSON.parse(cjs)).toEqual([true, true, false])
  })

  it('the OpenTelemetry bridge loads from @limiter/core/otel only, once @opentelemetry/api is there', async () => {
    const { mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync } = await import(
      'node:fs'
    )
    const { dirname, join } = await import('node:path')
    // The root entry and every chunk it loads name no @opentelemetry module.
    const dist = join(scratch.dir, 'node_modules', '@limiter', 'core', 'dist')
    const loaded = new Set<string>()
    const visit = (file: string) => {
      if (loaded.has(file)) return
      loaded.add(file)
      const text = readFileSync(join(dist, file), 'utf8')
      for (const [, chunk] of text.matchAll(/(?:from |require\()["'](\.\.?\/[^"']+)["']/g))
        visit(join(dirname(file), chunk as string))
    }
    visit('index.mjs')
    visit('index.cjs')
    visit('http/index.mjs')
    expect(loaded.size).toBeGreaterThan(5)
    for (const file of loaded)
      expect(readFileSync(join(dist, file), 'utf8'), file).not.toMatch(/@opentelemetry/)
    // Without the optional peer, only the subpath fails to load.
    await expect(
      scratch.run('otel-missing.mjs', "await import('@limiter/core/otel')", []),
    ).rejects.toThrow(/@opentelemetry\/api/)
    const here = new URL('../node_modules/', import.meta.url)
    for (const peer of ['@opentelemetry/api', '@opentelemetry/sdk-metrics']) {
      const target = join(scratch.dir, 'node_modules', peer)
      mkdirSync(dirname(target), { recursive: true })
      if (!readdirSync(dirname(target)).includes(peer.split('/')[1] as string))
        symlinkSync(realpathSync(new URL(peer, here)), target, 'dir')
    }
    const check = `
class Reader extends sdk.MetricReader { onShutdown() { return Promise.resolve() } onForceFlush() { return Promise.resolve() } }
const r = new Reader()
const meterProvider = new sdk.MeterProvider({ readers: [r] })
const bridge = otel.instrumentLimiters({ meterProvider })
const limiter = core.createLimiter({ limit: 1, window: '1m', name: 'packed' })
await limiter.consume('k'); await limiter.consume('k')
bridge.stop()
const { resourceMetrics } = await r.collect()
const points = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).filter((m) => m.descriptor.name === 'limiter.decisions').flatMap((m) => m.dataPoints)
console.log(JSON.stringify(points.map((p) => [p.attributes['limiter.result'], p.value]).sort()))
`
    const expected = [
      ['allowed', 1],
      ['limited', 1],
    ]
    const esm = await scratch.run(
      'otel.mjs',
      `import * as core from '@limiter/core'\nimport * as otel from '@limiter/core/otel'\nimport * as sdk from '@opentelemetry/sdk-metrics'\n${check}`,
      [],
    )
    expect(JSON.parse(esm)).toEqual(expected)
    const cjs = await scratch.run(
      'otel.cjs',
      `const core = require('@limiter/core')\nconst otel = require('@limiter/core/otel')\nconst sdk = require('@opentelemetry/sdk-metrics');(async () => {${check}})()`,
      [],
    )
    expect(JSON.parse(cjs)).toEqual(expected)
  })

  it('the Fetch kit loads from @limiter/core/fetch as ESM and CJS, without node:http', async () => {
    const { readFileSync } = await import('node:fs')
    const { dirname, join } = await import('node:path')
    const check = `
const limit = fetch.createFetchLimiter({ limit: 1, window: '1m' })
const ok = async () => new Response('ok')
const a = await limit.handle(new Request('http://x/'), ok, { ip: '1.2.3.4' })
const b = await limit.handle(new Request('http://x/'), ok, { ip: '1.2.3.4' })
console.log(JSON.stringify([a.status, b.status, a.headers.get('ratelimit-policy')]))
`
    const expected = [200, 429, '"gc1/1m";q=1;w=60']
    const esm = await scratch.run(
      'fetch.mjs',
      `import * as fetch from '@limiter/core/fetch'\n${check}`,
    )
    expect(JSON.parse(esm)).toEqual(expected)
    const cjs = await scratch.run(
      'fetch.cjs',
      `const fetch = require('@limiter/core/fetch');(async () => {${check}})()`,
    )
    expect(JSON.parse(cjs)).toEqual(expected)
    // the built root and fetch entries, and every chunk they load, import no node:http or node:net
    const dist = join(scratch.dir, 'node_modules', '@limiter', 'core', 'dist')
    const loaded = new Set<string>()
    const visit = (file: string) => {
      if (loaded.has(file)) return
      loaded.add(file)
      const text = readFileSync(join(dist, file), 'utf8')
      for (const [, chunk] of text.matchAll(/(?:from |require\()["'](\.\.?\/[^"']+)["']/g))
        visit(join(dirname(file), chunk as string))
    }
    for (const entry of ['index.mjs', 'index.cjs', 'fetch/index.mjs', 'fetch/index.cjs'])
      visit(entry)
    expect(loaded.size).toBeGreaterThan(5)
    for (const file of loaded)
      expect(readFileSync(join(dist, file), 'utf8'), file).not.toMatch(/["']node:(?:http|net)["']/)
  })

  it('ships only dist and package metadata', async () => {
    const { readdirSync } = await import('node:fs')
    const { join } = await import('node:path')
    const files = readdirSync(join(scratch.dir, 'node_modules', '@limiter', 'core')).sort()
    expect(
      files.filter(
        (f) => !['dist', 'package.json', 'README.md', 'CHANGELOG.md', 'LICENSE'].includes(f),
      ),
    ).toEqual([])
  })
})
