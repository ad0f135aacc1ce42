// `pnpm simulate`: runs each rate algorithm of the built package through a few traffic shapes
// and writes one SVG chart per algorithm and shape, and an index, to docs/algorithms/.
// The modules under simulate/ do the work; a test compares their output with the committed files.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createLimiter, MemoryStore } from '@limiter/core'
import { withClock } from '@limiter/core/testing'
import { indexPage, simulateAll } from './simulate/index.mjs'

const DOCS_DIR = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  'docs',
  'algorithms',
)

const results = await simulateAll({ createLimiter, MemoryStore, withClock })
mkdirSync(DOCS_DIR, { recursive: true })
const files = new Set(results.map((r) => r.file))
for (const old of readdirSync(DOCS_DIR))
  if (old.endsWith('.svg') && !files.has(old)) rmSync(join(DOCS_DIR, old))
for (const r of results) writeFileSync(join(DOCS_DIR, r.file), r.svg)
writeFileSync(join(DOCS_DIR, 'README.md'), indexPage(results))
for (const r of results)
  console.log(
    `${r.file.padEnd(36)} admitted ${String(r.admitted.length).padStart(2)}, most in 1 s ${r.most}`,
  )
console.log(`wrote ${results.length} charts and README.md to docs/algorithms/`)
