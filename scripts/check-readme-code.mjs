// Type-checks every TypeScript code block of the READMEs under the repo's strict settings,
// against the built packages (run `pnpm build` first). A block is compiled as a module of its own,
// in the package folder whose dependencies it imports (so `express`, `koa`, `fastify`, `hono`, `ioredis`
// and `@limiter/*` resolve as they would for a user). Declarations a fragment assumes go in an
// HTML comment just before the block, invisible on GitHub:
//
//   <!-- ts-prelude
//   import express from 'express'
//   declare const app: express.Express
//   -->
//
// `<!-- ts-skip: why -->` before a block leaves it out. Errors are reported as README:line.
import { execFileSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const readmes = [
  'README.md',
  ...['packages', 'examples'].flatMap((dir) =>
    readdirSync(join(root, dir)).map((name) => join(dir, name, 'README.md')),
  ),
  'bench/README.md',
].filter((file) => {
  try {
    readFileSync(join(root, file))
    return true
  } catch {
    return false
  }
})

// The package folder whose node_modules resolve what a block imports.
function hostOf(code) {
  const uses = (names) => new RegExp(`(from |import\\()'(${names})'`).test(code)
  if (uses('@opentelemetry/exporter-prometheus')) return 'examples/metrics'
  if (uses('@limiter/inspector')) return 'packages/inspector'
  if (uses('@limiter/nest|@nestjs/[a-z-]+')) return 'packages/nest'
  if (uses('@limiter/hono|hono|hono/[a-z-]+|@hono/node-server')) return 'packages/hono'
  if (uses('next|next/[a-z-]+')) return 'examples/next'
  if (uses('@limiter/fastify|fastify')) return 'packages/fastify'
  if (uses('@limiter/koa|koa|@koa/router|@koa/bodyparser')) return 'packages/koa'
  if (uses('@limiter/express|express')) return 'packages/express'
  return 'packages/core'
}

/** Every ```ts block: its README, the line of its first code line, prelude and code. */
function blocks(file) {
  const lines = readFileSync(join(root, file), 'utf8').split('\n')
  const found = []
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(ts|typescript)\s*$/.test(lines[i])) continue
    const start = i + 1
    let end = start
    while (end < lines.length && !lines[end].startsWith('```')) end++
    // The comment right before the fence (blank lines allowed in between).
    let j = i - 1
    while (j >= 0 && lines[j].trim() === '') j--
    let prelude = ''
    let skip = false
    if (j >= 0 && lines[j].trim().endsWith('-->')) {
      let k = j
      while (k >= 0 && !lines[k].includes('<!--')) k--
      const comment = lines.slice(k, j + 1).join('\n')
      if (/<!--\s*ts-skip/.test(comment)) skip = true
      const m = /<!--\s*ts-prelude\s*\n([\s\S]*?)-->/.exec(comment)
      if (m) prelude = m[1]
    }
    if (!skip)
      found.push({ file, line: start + 1, prelude, code: lines.slice(start, end).join('\n') })
    i = end
  }
  return found
}

const all = readmes.flatMap(blocks)
const byHost = new Map()
for (const [n, block] of all.entries()) {
  const host = hostOf(`${block.prelude}\n${block.code}`)
  const list = byHost.get(host) ?? []
  list.push({ ...block, name: `block${n}.ts` })
  byHost.set(host, list)
}

let failed = 0
for (const [host, list] of byHost) {
  const dir = join(root, host, '.readme-check')
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir)
  const offsets = new Map()
  for (const block of list) {
    const head = block.prelude === '' ? '' : `${block.prelude.trimEnd()}\n`
    writeFileSync(join(dir, block.name), `${head}${block.code}\nexport {}\n`)
    offsets.set(block.name, { block, preludeLines: head === '' ? 0 : head.split('\n').length - 1 })
  }
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      extends: relative(dir, join(root, 'tsconfig.base.json')),
      // Nest's decorators (legacy, as Nest apps compile them)
      compilerOptions: { noEmit: true, noUnusedLocals: false, experimentalDecorators: true },
      include: ['*.ts'],
    }),
  )
  try {
    execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', dir], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    })
  } catch (error) {
    const out = `${error.stdout ?? ''}${error.stderr ?? ''}`
    for (const line of out.split('\n')) {
      const m = /^(?:.*[\\/])?(block\d+\.ts)\((\d+),(\d+)\): (.*)$/.exec(line)
      if (!m) {
        if (line.trim() !== '' && !line.startsWith(' ')) console.error(`${host}: ${line}`)
        continue
      }
      const { block, preludeLines } = offsets.get(m[1])
      const at = Number(m[2]) - preludeLines
      const where =
        at >= 1 ? `${block.file}:${block.line + at - 1}` : `${block.file}:${block.line} (prelude)`
      console.error(`${where}:${m[3]} ${m[4]}`)
      failed++
    }
    if (failed === 0) {
      console.error(out)
      failed++
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
if (failed > 0) {
  console.error(`check-readme-code: ${failed} error(s) in README code blocks`)
  process.exit(1)
}
console.log(
  `check-readme-code: ${all.length} TypeScript blocks in ${readmes.length} READMEs compile`,
)
