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
